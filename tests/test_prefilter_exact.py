"""JAX001's prefilter is exactly its specification, however its scans are ordered.

The specification: the file names ``jax``, a transform (``_TRANSFORM_BYTES``) and an access
or consumer (``_ACCESS_BYTES``, one regex). The prefilter answers it with cheaper scans
(common spellings first, members and reversed consumers in two searches); a file it rejects
wrongly would never be checked, so the two must agree on every input.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from jax_codemod.rules import _access_text as access_text
from jax_codemod.rules import traced_concrete_access as jax001

REPO = Path(__file__).resolve().parent.parent
RULE = jax001.TracedConcreteAccess()


# The prefilter's specification, the slow way: one whitespace-tolerant regex.
ACCESS_BYTES = re.compile(jax001.TEXT.access_pattern().encode())


def imported_decorator(source: bytes) -> bool:
    """A function decorated by a bare name (``@compiled``, ``@compiled(...)``) that a line
    ``from <module> import ...`` names, the module relative or outside the known libraries: a
    transform alias may come from another module of the project (issue 34). Line by line."""
    lines = re.split(rb"\r\n|\r|\n", source)
    decorators = set()
    for line in lines:
        stripped = line.lstrip(b" \t")
        if stripped.startswith(b"@"):
            head = re.match(rb"@[ \t]*([A-Za-z_]\w*)[ \t]*(\(|#|$)", stripped)
            if head:
                decorators.add(head.group(1).decode())
    for line in lines:
        words = line.split()
        if len(words) >= 3 and words[0] == b"from" and words[2] == b"import":
            module = words[1].decode("latin-1")
            named = set(re.findall(r"[A-Za-z_]\w*", line.decode("latin-1").split("import", 1)[1]))
            outside = module.startswith(".") or module.split(".")[0] not in access_text.LIBRARIES
            if outside and named & decorators:
                return True
    return False


def specified(source: bytes) -> bool:
    return (
        b"jax" in source
        and (access_text.TRANSFORM_BYTES.search(source) is not None or imported_decorator(source))
        and ACCESS_BYTES.search(source) is not None
    )


NAMES = sorted(
    {name.encode() for name in (*jax001.TEXT.method_names, *jax001.TEXT.property_names, *jax001.TEXT.consumer_names)}
    | set(access_text.TRANSFORM_SPELLINGS)
)
ACCESSES = [
    *(b"x." + name + b"(" for name in NAMES),
    *(b"x. " + name + b" (" for name in NAMES),
    *(b" " + name + b"(" for name in NAMES),
    *(b"jnp." + name + b"(" for name in NAMES),
    *(b"jax." + name for name in NAMES),
    *(b"x." + name + b"\n" for name in NAMES),
]
PIECES = st.one_of(
    st.sampled_from([*NAMES, b"jax", b"jnp.", b"jax.", b".", b" ", b"\t", b"\n", b"(", b"_", b"x", b"9", b"#"]),
    st.sampled_from(ACCESSES),
    st.binary(max_size=6),
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(PIECES, max_size=14))
def test_the_prefilter_is_its_specification(pieces):
    source = b"".join(pieces)
    assert RULE.prefilter(source) == specified(source)


def test_the_prefilter_is_its_specification_on_the_project_own_files():
    paths = sorted((REPO / "tests").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py"))
    sources = [path.read_bytes() for path in paths]
    assert sum(map(specified, sources)) > 20  # the comparison covers files that pass
    for path, source in zip(paths, sources, strict=True):
        assert RULE.prefilter(source) == specified(source), path


def test_each_transform_spelling_with_each_access_form():
    for spelling in access_text.TRANSFORM_SPELLINGS:
        for access in ACCESSES:
            for source in (b"import jax\n" + spelling + b"\n" + access, b"import os\n" + spelling + b"\n" + access):
                assert RULE.prefilter(source) == specified(source), source


def test_every_transform_spelling_is_scanned():
    assert sorted(access_text.TRANSFORMS_COMMON_FIRST) == sorted(access_text.TRANSFORM_SPELLINGS)


def decorates_with_import_per_name(source: bytes) -> bool:
    """The imported-decorator scan as first written: one search of the file per decorator name."""
    if b"@" not in source or b"import" not in source:
        return False
    for name in set(re.findall(rb"^[ \t]*@[ \t]*([A-Za-z_]\w*)[ \t]*(?:\(|#|\r?$)", source, re.MULTILINE)):
        pattern = rb"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b[^\r\n]*\b" + name + rb"\b"
        for match in re.finditer(pattern, source, re.MULTILINE):
            module = match.group(1)
            if module.startswith(b".") or module.split(b".", 1)[0] not in access_text._LIBRARY_TOPS:
                return True
    return False


DECORATOR_PIECES = st.sampled_from(
    [b"@", b"@ ", b"from", b"from ", b" import ", b"import", b"(", b")", b",", b"#", b" ", b"\t", b"\n", b"\r\n", b"\r",
     b".", b"..mod", b"mod", b"jax", b"jax.numpy", b"os.path", b"name", b"name2", b"_n", b"as", b"9",
     b"\n@name\n", b"\n@name(", b"\nfrom .mod import name", b"\nfrom mod import x, name", b"\nfrom jax import name",
     b"\n  from os.path import name"]
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(DECORATOR_PIECES, max_size=24))
def test_the_imported_decorator_scan_answers_as_a_search_per_name(pieces):
    source = b"".join(pieces)
    assert access_text._decorates_with_import(source) == decorates_with_import_per_name(source)
