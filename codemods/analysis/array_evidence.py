"""What shows a value is an array (an object with ``__dlpack__``) rather than a DLPack capsule:
the value analysis's kind, a known constructor or annotation, a tensor method's result, a guard
(``hasattr(x, "__dlpack__")``, ``isinstance(x, np.ndarray)``), or a use only an array survives
(``x.shape``, ``x[0]``, ``x + 1``); and which library a value is from (``library``)."""

from __future__ import annotations

import ast
import weakref

from jax_codemod.analysis.capsule_facts import (
    _ARRAY_CLASSES,
    _ARRAY_LIBRARIES,
    _ARRAY_ONLY_ATTRIBUTES,
    _ARRAY_WORDS,
    _CAPSULE_WORDS,
    _PROTOCOL_ATTRIBUTES,
    _PROTOCOL_OBJECT_MAKERS,
    _TENSOR_ATTRIBUTES,
    _TENSOR_METHODS,
)
from jax_codemod.analysis.scopes import ITER, Definition
from jax_codemod.analysis.values import ARRAY, CAPSULE, NUMPY, TRACER
from jax_codemod.analysis.values import CUPY as CUPY_ARRAY
from jax_codemod.analysis.values import TORCH as TORCH_TENSOR


class ArrayEvidence:
    def __init__(self, analysis) -> None:
        # The file's CapsuleAnalysis, which holds this object: a weak proxy, or the two would be a
        # cycle that only the collector frees (the engine frees a file's analysis by refcount).
        self.analysis = weakref.proxy(analysis)
        self.ctx = analysis.ctx
        self.values = analysis.values
        self.scopes = analysis.scopes
        self.reach = analysis.reach

    def array_evidence(self, node: ast.AST, depth: int = 0, strict: bool = False) -> str | None:
        """Why ``node`` holds an object with ``__dlpack__`` rather than a capsule, or None.

        Positive evidence only: a known array/tensor constructor or annotation (the shared
        value analysis), a tensor method's result (``t.contiguous()``), or the same value used
        in this function the way only an array can be -- a PyCapsule has no attributes, no
        items and no arithmetic, so ``x.shape``, ``x[0]`` or ``x + 1`` would raise on one.

        ``strict``: evidence that it is an array, not merely something other than a capsule
        (a dict is indexable and has attributes too, and its items may be capsules)."""
        if depth > 4:
            return None
        value = self.values.value_of(node)
        if value.kind not in ("unknown", CAPSULE):
            return value.why or f"it is a {value.kind}"
        if isinstance(node, ast.Call) and self.analysis.consumer_name(node):
            return f"it is what `{self.analysis.consumer_name(node)}` returns"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_METHODS:
            return f"it is the result of `.{node.func.attr}()`"
        if isinstance(node, ast.Attribute) and node.attr in _TENSOR_ATTRIBUTES:
            return f"it is `.{node.attr}` of an array"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            inner = self.array_evidence(node.value, depth + 1, strict=True)
            return f"it is an item of an array ({inner})" if inner else None
        if isinstance(node, ast.BinOp) and not strict:
            inner = self.array_evidence(node.left, depth + 1) or self.array_evidence(node.right, depth + 1)
            return f"it is computed from an array ({inner})" if inner else None
        if isinstance(node, ast.IfExp):
            body = self.array_evidence(node.body, depth + 1, strict)
            orelse = body and self.array_evidence(node.orelse, depth + 1, strict)
            return f"either branch is an array ({body}; {orelse})" if orelse else None
        if isinstance(node, ast.Call) and not strict and self.analysis.producer(node) is None:
            # An array library's own function (`tf.identity(x)`, `torch.ones(3)`) makes arrays;
            # its capsule makers are producers, handled above.
            library = self.analysis.qualname(node.func) or ""
            if library.split(".", 1)[0] in _ARRAY_LIBRARIES and "dlpack" not in library.lower():
                return f"it is what `{library}` returns"
            if library in _PROTOCOL_OBJECT_MAKERS:
                return f"`{library}` returns an object with `__dlpack__`"
        if not isinstance(node, ast.Name):
            return None
        if not strict and _ARRAY_WORDS.search(node.id) and not _CAPSULE_WORDS.search(node.id):
            return f"its name `{node.id}` says it is an array"
        parameter = self.analysis.origins.parameter_behind(node)  # the parameter itself, or an element it iterates
        if parameter is not None and parameter[1].annotation is not None and self._array_annotation(
            parameter[1].annotation
        ):
            return f"`{parameter[1].arg}` is annotated `{ast.unparse(parameter[1].annotation)}`"
        scope = self.scopes.binding_scope(node)
        reaching, complete = self.reach.reaching(node)
        every = self._used_as_array(node, scope, reaching, complete, strict) or self._guarded_as_array(node)
        if every:
            return every
        # Else each value the name may hold here must be shown to be an array on its own.
        found = []
        for definition in reaching:
            own = None
            if isinstance(definition.node, (ast.Assign, ast.AnnAssign)) and definition.value is not None and (
                not definition.path
            ):
                own = self.array_evidence(definition.value, depth + 1, strict)
            elif definition.path == (ITER,) and definition.value is not None:
                # `for p in packs` / `[f(p) for p in packs]`: an element of what it iterates.
                own = self._element_evidence(definition.value, depth + 1, strict)
            own = own or self._used_as_array(node, scope, [definition], True, strict)
            if not own:
                return None
            found.append(own)
        if not complete:
            # What the name held before this scope bound it: nothing (a NameError, not a
            # capsule), a parameter, or an enclosing scope's value.
            parameter, outer, _ = self.scopes.entry(node.id, scope)
            if parameter is not None or outer:
                entry = self._used_as_array(node, scope, [], False, strict) or (
                    None if strict else self._past_capsule_test(node)
                )
                if not entry:
                    return None
                found.append(entry)
        return found[0] if found else None

    def _element_evidence(self, iterable: ast.AST, depth: int, strict: bool) -> str | None:
        """``array_evidence`` of every element of ``iterable``: a display, or a comprehension
        (directly, or bound once to the name iterated), each of whose elements has it."""
        if depth > 4:
            return None
        if isinstance(iterable, ast.Name):
            reaching, complete = self.reach.reaching(iterable)
            if not complete or len(reaching) != 1:
                return None
            definition = reaching[0]
            if not isinstance(definition.node, ast.Assign) or definition.path or definition.value is None:
                return None
            if self._maybe_mutated(iterable):
                return None  # `packs.append(capsule)`: the elements are not only the display's
            iterable = definition.value
        if isinstance(iterable, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            inner = self.array_evidence(iterable.elt, depth + 1, strict)
            return f"each element is an array ({inner})" if inner else None
        if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)) and iterable.elts:
            found = [self.array_evidence(e, depth + 1, strict) for e in iterable.elts]
            return f"each element is an array ({found[0]})" if all(found) else None
        return None

    def _maybe_mutated(self, name: ast.Name) -> bool:
        """Whether anything in the scope binding ``name`` (nested scopes included) may change
        the container it names in place: a method or attribute of it (`append`, `extend`), an
        item assigned or deleted, an augmented assignment."""
        scope = self.scopes.binding_scope(name)
        for node in ast.walk(scope):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name.id:
                return True
            if (
                isinstance(node, ast.Subscript)
                and not isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id == name.id
            ):
                return True
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name.id:
                return True
        return False

    def _used_as_array(self, name: ast.Name, scope: ast.AST, reaching: list[Definition],
                       complete: bool, strict: bool = False) -> str | None:
        """A read that sees exactly these definitions (the same value) and that only an array survives."""
        same = {id(d.node) for d in reaching}
        for load in self.reach.loads(scope, name.id):
            if load is name:
                continue
            other, other_complete = self.reach.reaching(load)
            if {id(d.node) for d in other} != same or other_complete != complete:
                continue
            parent = self.ctx.parent(load)
            if isinstance(parent, ast.Attribute) and parent.value is load and (
                parent.attr in _ARRAY_ONLY_ATTRIBUTES or parent.attr in _PROTOCOL_ATTRIBUTES
                or not strict and not parent.attr.startswith("__")
            ):
                return f"line {load.lineno} reads `{name.id}.{parent.attr}`, which a capsule does not have"
            if strict:
                continue
            if isinstance(parent, ast.Subscript) and parent.value is load:
                return f"line {load.lineno} indexes `{name.id}`, which a capsule does not support"
            if isinstance(parent, ast.BinOp) or isinstance(parent, ast.UnaryOp) and not isinstance(
                parent.op, ast.Not
            ):
                return f"line {load.lineno} computes with `{name.id}`, which a capsule does not support"
        return None

    def _guarded_as_array(self, name: ast.Name) -> str | None:
        """``if hasattr(x, "__dlpack__"):`` / ``torch.is_tensor(x)`` / ``isinstance(x, np.ndarray)``
        around the read, or ``if not ...: raise`` (or return) before it, in the same function."""
        same = {id(d.node) for d in self.reach.reaching(name)[0]}
        child: ast.AST = name
        for ancestor in self.ctx.ancestors(name):
            if isinstance(ancestor, (ast.If, ast.IfExp, ast.While)):
                inside = ancestor.body if isinstance(ancestor, ast.IfExp) else None
                in_body = child is inside or (isinstance(ancestor.body, list) and child in ancestor.body)
                if in_body:
                    why = self._array_test(ancestor.test, name, same, negated=False)
                    if why:
                        return why
            block = None
            for part in ("body", "orelse", "finalbody"):
                statements = getattr(ancestor, part, None)
                if isinstance(statements, list) and any(s is child for s in statements):
                    block = statements
            if isinstance(block, list) and isinstance(child, ast.stmt):
                for earlier in block[:next(i for i, s in enumerate(block) if s is child)]:
                    if isinstance(earlier, ast.If) and not earlier.orelse and earlier.body and isinstance(
                        earlier.body[-1], (ast.Raise, ast.Return)
                    ):
                        why = self._array_test(earlier.test, name, same, negated=True)
                        if why:
                            return why
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            child = ancestor
        return None

    def _past_capsule_test(self, name: ast.Name) -> str | None:
        """``if type(x).__name__ == "PyCapsule": x = ...`` earlier in a block around the read, in
        the same function, its body rebinding ``x`` before anything can leave it: what ``x``
        held before the test and still holds at the read was no capsule (JAX005's conversion of
        a sibling backend's capsule, which must not be questioned again by its name)."""
        child: ast.AST = name
        for ancestor in self.ctx.ancestors(name):
            for part in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, part, None)
                if not isinstance(block, list) or not isinstance(child, ast.stmt) or not any(s is child for s in block):
                    continue
                for earlier in block[:next(i for i, s in enumerate(block) if s is child)]:
                    if isinstance(earlier, ast.If) and not earlier.orelse and _tests_capsule(earlier.test, name.id) and (
                        _rebinds_first(earlier.body, name.id)
                    ):
                        return f"line {earlier.lineno} converts `{name.id}` where it was a capsule"
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            child = ancestor
        return None

    def _array_test(self, test: ast.AST, name: ast.Name, same: set[int], negated: bool) -> str | None:
        if negated:
            if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                return None
            test = test.operand
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and not negated \
            else [test]
        for check in tests:
            if not (isinstance(check, ast.Call) and check.args and isinstance(check.args[0], ast.Name)
                    and check.args[0].id == name.id):
                continue
            if {id(d.node) for d in self.reach.reaching(check.args[0])[0]} != same:
                continue
            func = self.analysis.qualname(check.func) or getattr(check.func, "id", None)
            second = check.args[1] if len(check.args) == 2 else None
            if func == "hasattr" and isinstance(second, ast.Constant) and second.value in _PROTOCOL_ATTRIBUTES:
                return f"it is checked with `{ast.unparse(check)}`"
            if func == "torch.is_tensor" and len(check.args) == 1:
                return f"it is checked with `{ast.unparse(check)}`"
            if func == "isinstance" and second is not None and all(
                self._array_annotation(t) for t in (second.elts if isinstance(second, ast.Tuple) else [second])
            ):
                return f"it is checked with `{ast.unparse(check)}`"
        return None

    def _array_annotation(self, annotation: ast.AST) -> bool:
        value = self.values.annotation_value(annotation)
        if value.kind in (ARRAY, TRACER, TORCH_TENSOR, NUMPY, CUPY_ARRAY):
            return True
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
        if isinstance(annotation, ast.Subscript):  # jaxtyping's Float[torch.Tensor, "b"], Optional[...]
            inner = annotation.slice
            first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
            return self._array_annotation(first)
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            members = [m for m in (annotation.left, annotation.right)
                       if not (isinstance(m, ast.Constant) and m.value is None)]
            return bool(members) and all(self._array_annotation(m) for m in members)
        return self.analysis.qualname(annotation) in _ARRAY_CLASSES

    def library(self, node: ast.AST) -> str | None:
        """"torch", "numpy", "jax" or "cupy" when the file shows which library ``node`` is from."""
        kind = self.values.value_of(node).kind
        library = {TORCH_TENSOR: "torch", NUMPY: "numpy", ARRAY: "jax", TRACER: "jax", CUPY_ARRAY: "cupy"}.get(kind)
        method = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
        if library is None and method in ("detach", "contiguous", "requires_grad_"):
            return "torch"  # torch's own methods, whatever the receiver
        return library


def _tests_capsule(test: ast.AST, name: str) -> bool:
    """``type(name).__name__ == "PyCapsule"`` (either side): true exactly for a capsule."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    named = [s for s in sides if isinstance(s, ast.Constant) and s.value == "PyCapsule"]
    typed = [
        s for s in sides
        if isinstance(s, ast.Attribute) and s.attr == "__name__" and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Name) and s.value.func.id == "type" and len(s.value.args) == 1
        and not s.value.keywords and isinstance(s.value.args[0], ast.Name) and s.value.args[0].id == name
    ]
    return len(named) == 1 and len(typed) == 1


def _rebinds_first(body: list[ast.stmt], name: str) -> bool:
    """A statement of ``body`` assigns ``name`` outright before any can leave the block early
    (``break``, ``continue``) or branch: the block ends with ``name`` bound anew, or raises."""
    for statement in body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return True
        if not isinstance(statement, (ast.Expr, ast.Import, ast.ImportFrom, ast.Pass, ast.Assign, ast.AnnAssign)):
            return False
    return False
