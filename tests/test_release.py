"""A release people can pin: the license the metadata names, a README that is a front page whose
links lead somewhere, and install and pin snippets that name refs this repository has."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jax_codemod
import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted((REPO / "docs").glob("*.md"))
SNIPPET_SOURCES = [REPO / "README.md", *DOCS, REPO / "action.yml", *sorted((REPO / "examples" / "ci").glob("*.yml"))]
# Where a snippet pins codemod itself: pre-commit's `rev:`, the action's `uses: OWNER/codemod@REF`, a
# git URL `.../codemod@REF` (pip, CODEMOD_SPEC). Third-party actions are pinned elsewhere (test_action).
PINS = (re.compile(r"^\s*rev:\s*([^\s#]+)", re.MULTILINE),
        re.compile(r"[\w.-]+/codemod@([^\s'\"`),]+)"))
PLACEHOLDER = "<commit>"


def pinned_refs(text: str) -> list[str]:
    return [ref for pattern in PINS for ref in pattern.findall(text)]


def ref_exists(ref: str) -> bool:
    done = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    return done.returncode == 0


def test_the_license_is_the_one_the_metadata_names():
    text = (REPO / "LICENSE").read_text()
    assert 'license = { text = "Apache-2.0" }' in (REPO / "pyproject.toml").read_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    # The full text, not a notice: its nine sections and the appendix.
    for heading in ("1. Definitions.", "4. Redistribution.", "9. Accepting Warranty or Additional Liability.",
                    "END OF TERMS AND CONDITIONS", "APPENDIX: How to apply the Apache License"):
        assert heading in text, heading
    assert len(text.splitlines()) >= 200


def test_the_readme_is_a_front_page_whose_links_lead_somewhere():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 500
    for source in [REPO / "README.md", *DOCS]:
        for target in re.findall(r"\]\(([^)\s]+)\)", source.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (source.parent / path).resolve() if path else source
            assert file.exists(), f"{source.name}: {target}"
            if anchor and file.suffix == ".md":
                slugs = {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
                         for heading in re.findall(r"^#+ (.+)$", file.read_text(), re.MULTILINE)}
                assert anchor in slugs, f"{source.name}: {target}"
    # What moved to docs/ is linked from the front page.
    for page in DOCS:
        assert f"(docs/{page.name})" in readme, page.name


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout: no refs to check")
def test_every_pin_names_a_ref_this_repository_has():
    """No release is tagged yet, so a snippet pins `<commit>`, which the reader fills in (the README
    says with what), or a ref that `git rev-parse --verify` finds here; never a tag that is not
    there (the v0.3.0 the README used to name)."""
    found = {}
    for source in SNIPPET_SOURCES:
        for ref in pinned_refs(source.read_text()):
            found.setdefault(ref, source.name)
    assert PLACEHOLDER in found and len(found) >= 1
    missing = {ref: name for ref, name in found.items() if ref != PLACEHOLDER and not ref_exists(ref)}
    assert not missing, f"refs that do not exist in this repository: {missing}"
    # The check can fail: a tag that does not exist is caught, an existing commit passes.
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()
    assert ref_exists(head) and not ref_exists("v0.3.0-no-such-tag")
    assert pinned_refs("    rev: v9.9.9  # x\n  uses: o/codemod@abc\n") == ["v9.9.9", "abc"]
    assert "git rev-parse HEAD" in (REPO / "README.md").read_text()


def test_the_name_clash_and_the_versioning_are_documented():
    readme = (REPO / "README.md").read_text()
    assert "`codemod` 1.0.0" in readme and "never\n`pip install codemod`" in readme
    assert "python -m jax_codemod.cli" in readme
    assert f"today {jax_codemod.__version__}" in readme and "CHANGELOG.md" in readme
    # The clash-free spelling works.
    done = subprocess.run([sys.executable, "-m", "jax_codemod.cli", "--version"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and jax_codemod.__version__ in done.stdout
