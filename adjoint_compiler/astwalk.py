"""Syntax-tree utilities the passes call many times: `walk`, `children` and `clone`.

`walk(node)` yields the nodes `ast.walk` yields, in the same order and as lazily (a node's
children are read just before the node is yielded), without the two generators per node
`ast.walk` goes through. `clone(node)` is `copy.deepcopy` of a tree: the same new tree (every
node and list new, shared nodes still shared, other values deep-copied), without `deepcopy`'s
generic dispatch for each node; `children(node)` is `list(ast.iter_child_nodes(node))`. The
passes walk and copy the generated code's trees many times; this is most of the time a
compilation spends in the standard library's `ast` and `copy`.

    [type(n).__name__ for n in walk(gast.parse("x = a + 1").body[0])]
    -> ['Assign', 'Name', 'BinOp', 'Store', 'Name', 'Add', 'Constant', 'Load']
"""
from __future__ import annotations

import copy
from ast import AST
from collections import deque

_MISSING = object()
_ATOMS = frozenset({str, int, float, complex, bool, type(None), bytes, type(Ellipsis)})


def walk(node):
    """Every node under `node` (itself first), in `ast.walk`'s order."""
    todo = deque((node,))
    pop, push, extend = todo.popleft, todo.append, todo.extend
    while todo:
        node = pop()
        for field in node._fields:
            value = getattr(node, field, _MISSING)
            if isinstance(value, AST):
                push(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, AST)])
        yield node


def children(node) -> list:
    """The child nodes of `node`, in `ast.iter_child_nodes`'s order."""
    out = []
    for field in node._fields:
        value = getattr(node, field, _MISSING)
        if isinstance(value, AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, AST)])
    return out


def clone(tree, memo: dict | None = None):
    """`copy.deepcopy(tree)` for a syntax tree (a node, or a list of nodes)."""
    return _clone(tree, {} if memo is None else memo)


def _clone(x, memo: dict):
    kind = type(x)
    if kind in _ATOMS:
        return x
    y = memo.get(id(x), _MISSING)
    if y is not _MISSING:
        return y
    if isinstance(x, AST):
        y = kind.__new__(kind)
        memo[id(x)] = y
        fields = y.__dict__
        for name, value in x.__dict__.items():
            fields[name] = value if type(value) in _ATOMS else _clone(value, memo)
        return y
    if kind is list:
        y = memo[id(x)] = []
        y.extend([_clone(item, memo) for item in x])
        return y
    return copy.deepcopy(x, memo)
