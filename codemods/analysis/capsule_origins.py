"""Where a value fed to a consumer comes from (``origin``): a capsule's flow, a parameter (and
what says it is given capsules: its name, its annotation, a call of its function in the file),
a capsule the value analysis follows into a container, an array, or unknown; and, for a value of
unknown kind, where it comes from in words (``where_from``)."""

from __future__ import annotations

import ast
import weakref

from jax_codemod.analysis.capsule_facts import _CAPSULE_WORDS, Flow, Origin
from jax_codemod.analysis.values import CAPSULE, FUNCTION, LIBRARY, MODULE


class Origins:
    def __init__(self, analysis) -> None:
        # The file's CapsuleAnalysis, which holds this object: a weak proxy, or the two would be a
        # cycle that only the collector frees (the engine frees a file's analysis by refcount).
        self.analysis = weakref.proxy(analysis)
        self.ctx = analysis.ctx
        self.values = analysis.values
        self.scopes = analysis.scopes
        self.reach = analysis.reach

    def origin(self, node: ast.AST) -> Origin:
        """What the value ``node`` (a consumer's argument) is, as far as the file shows."""
        producer = self.analysis.producer(node)
        if producer is not None:
            return Origin("capsule", self.analysis.flow(producer))
        if isinstance(node, ast.Name):
            for flow in self._flows_through(node):
                return Origin("capsule", flow)
            parameter = self.parameter_behind(node)
            if parameter is not None:
                function, argument = parameter
                if self.analysis.pairs.pair_returns_arrays(function):
                    return Origin("array")
                return Origin("parameter", parameter=argument, function=function,
                              evidence=self._parameter_evidence(function, argument))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            for flow in self._flows_through(node.value):
                if flow.via == "container":
                    return Origin("capsule", flow)
            parameter = self.parameter_behind(node.value)
            if parameter is not None:
                function, argument = parameter
                evidence = self._parameter_evidence(function, argument) or self._evidence(node)
                if evidence:
                    return Origin("parameter", parameter=argument, function=function, evidence=evidence)
        value = self.values.value_of(node)
        if value.kind == CAPSULE:
            # A capsule the value analysis follows into a container or through a comprehension,
            # where no producer's flow (and so no fix) reaches: `why` names its maker.
            return Origin("stored", evidence=value.why)
        if value.kind != "unknown":
            return Origin("array")
        evidence = self._evidence(node)
        if evidence and self.analysis.evidence.array_evidence(node) is not None:
            # A name that says "capsule" is a hint; what the file shows the value is (a tensor
            # method's result, as JAX005's own fix leaves `a_dlpack`) is evidence, and wins.
            return Origin("array")
        return Origin("unknown", evidence=evidence)

    def parameter_behind(self, name: ast.Name, depth: int = 0) -> tuple[ast.AST, ast.arg] | None:
        """The parameter whose value ``name`` holds -- directly, or as an element it iterates."""
        if depth > 4:
            return None
        scope = self.scopes.scope_of(name)
        reaching, _ = self.reach.reaching(name)
        if not reaching:
            argument, outer, _ = self.scopes.entry(name.id, scope)
            if argument is not None:
                return self.scopes.scope_of(argument), argument
            reaching = outer
        if len(reaching) != 1:
            return None
        definition = reaching[0]
        if isinstance(definition.node, (ast.comprehension, ast.For, ast.AsyncFor)) and isinstance(
            definition.value, ast.Name
        ):
            return self.parameter_behind(definition.value, depth + 1)
        return None

    def _flows_through(self, name: ast.Name) -> list[Flow]:
        found = []
        for producer in self.analysis.producers:
            flow = self.analysis.flow(producer)
            if flow.via in ("variable", "container") and any(use.node is name for use in flow.uses) or flow.via == "container" and any(
                isinstance(use.node, ast.Subscript) and use.node.value is name for use in flow.uses
            ):
                found.append(flow)
        return found

    def _parameter_evidence(self, function: ast.AST, parameter: ast.arg) -> str | None:
        words = self._evidence_in_text(parameter.arg)
        if words:
            return f"its name `{parameter.arg}` says so"
        if parameter.annotation is not None and _CAPSULE_WORDS.search(ast.unparse(parameter.annotation)):
            return f"it is annotated `{ast.unparse(parameter.annotation)}`"
        caller = self._capsule_passed_to(function, parameter)
        if caller is not None:
            return f"a call of `{function.name}` in this file passes it a capsule"
        return None

    def _capsule_passed_to(self, function: ast.AST, parameter: ast.arg) -> ast.Call | None:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        arguments = function.args
        positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
        if self.ctx.parent(function) is not self.ctx.tree and positional and positional[0] in ("self", "cls"):
            positional = positional[1:]
        for call in self.analysis.index.calls:
            if not self._may_call(call.func, function):
                continue
            passed = None
            if parameter.arg in positional and positional.index(parameter.arg) < len(call.args):
                passed = call.args[positional.index(parameter.arg)]
            if arguments.vararg is parameter and len(call.args) > len(positional):
                passed = call.args[len(positional)]
            passed = next((k.value for k in call.keywords if k.arg == parameter.arg), passed)
            if passed is not None and not isinstance(passed, ast.Starred):
                if self.analysis.producer(passed) is not None:
                    return call
                if isinstance(passed, ast.Name) and self._flows_through(passed):
                    return call
        return None

    def _may_call(self, func: ast.AST, function: ast.AST) -> bool:
        """Whether ``func`` may be ``function``: a name that resolves to it, or a method of that
        name on a receiver that is no module (`torch.utils.dlpack.from_dlpack` is not the file's
        own `from_dlpack`, whatever it is spelled)."""
        if isinstance(func, ast.Name):
            if func.id != function.name:
                return False
            value = self.values.value_of(func)
            return value.kind not in (FUNCTION, MODULE, LIBRARY) or value.node is function
        if isinstance(func, ast.Attribute) and func.attr == function.name:
            return self.values.qualname(func) is None
        return False

    def _evidence(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name) and self._evidence_in_text(node.id):
            return f"its name `{node.id}` says so"
        if isinstance(node, ast.Attribute) and self._evidence_in_text(node.attr):
            return f"the attribute `{node.attr}` says so"
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and self._evidence_in_text(key.value):
                return f"the key {key.value!r} says so"
            return self._evidence(node.value)
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if self._evidence_in_text(callee) and not callee.startswith("from_"):
                return f"it comes from `{callee}()`"
        return None

    @staticmethod
    def _evidence_in_text(text: str) -> bool:
        return bool(_CAPSULE_WORDS.search(text)) and not text.startswith(("from_dlpack", "__dlpack"))

    def where_from(self, node: ast.AST, depth: int = 0) -> str:
        """Where a consumed value of unknown kind comes from, in words."""
        if isinstance(node, ast.Name) and depth < 4:
            reaching, complete = self.reach.reaching(node)
            if complete and len(reaching) == 1 and isinstance(reaching[0].node, (ast.Assign, ast.AnnAssign)) and (
                reaching[0].value is not None and not reaching[0].path
            ):
                return self.where_from(reaching[0].value, depth + 1)
        if isinstance(node, (ast.Name, ast.Subscript)):
            name = node if isinstance(node, ast.Name) else node.value
            if isinstance(name, ast.Name):
                parameter = self.parameter_behind(name)
                if parameter is not None:
                    function, argument = parameter
                    owner = getattr(function, "name", "a lambda")
                    owner = f"`{owner}`" if owner != "a lambda" else owner
                    star = "*" if argument is getattr(function.args, "vararg", None) else (
                        "**" if argument is getattr(function.args, "kwarg", None) else "")
                    if name is not node:
                        return f"an item of the parameter `{star}{argument.arg}` of {owner}"
                    element = "an element of " if star or name.id != argument.arg else ""
                    return f"{element}the parameter `{star}{argument.arg}` of {owner}"
        if isinstance(node, ast.Attribute):
            return f"the attribute `{node.attr}`"
        if isinstance(node, ast.Call):
            return f"what `{ast.unparse(node.func)}()` returns"
        if isinstance(node, ast.Subscript):
            return f"an item of `{ast.unparse(node.value)}`"
        return "a value this file does not show the making of"
