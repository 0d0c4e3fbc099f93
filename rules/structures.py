"""Reads of the fields of structures (dataclasses, named tuples, the user's objects): `p.W` of a
structure is compiled as `getattr(p, 'W')`, whose gradient is the structure's gradient with `W`'s
slot set (rt.field_adjoint; see trees.py). A dict's items are read with `operator.getitem`."""
from adjoint_compiler import runtime as rt
from adjoint_compiler.registry import adjoint, nondifferentiable, tangent


@adjoint(getattr)
def getattr_(y, obj, name):
    obj_bar += rt.field_adjoint(y_bar, obj, name)


@tangent(getattr)
def getattr_dot(y, obj, name):
    y_dot = rt.field_tangent(obj_dot, obj, name)


# A dict display returned or put in a tuple, and `P(a, b)` of a NamedTuple or plain dataclass.
@adjoint(rt.build_dict)
def build_dict(y, keys, *values):
    values_bar += rt.dict_values(y_bar, keys)


@tangent(rt.build_dict)
def build_dict_dot(y, keys, *values):
    y_dot = rt.build_dict(keys, *values_dot)


@adjoint(rt.build_record)
def build_record(y, cls, fields, *values):
    values_bar += rt.record_values(y_bar, fields)


@tangent(rt.build_record)
def build_record_dot(y, cls, fields, *values):
    y_dot = rt.record_tangent(cls, fields, *values_dot)


@adjoint(rt.build_object)
def build_object(y, cls, names, *values):
    values_bar += rt.record_values(y_bar, names)


@tangent(rt.build_object)
def build_object_dot(y, cls, names, *values):
    y_dot = rt.build_object(cls, names, *values_dot)


# `dict(pairs)`: a dict comprehension (normalize makes it `dict([(k, v) for ...])`), or a copy of a dict.
@adjoint(dict)
def dict_(y, pairs):
    pairs_bar += rt.dict_pairs_adjoint(y_bar, pairs)


@tangent(dict)
def dict_dot(y, pairs):
    y_dot = rt.dict_pairs_tangent(pairs_dot, pairs)


# `d.values()`, `d.items()`, `d.keys()` of a dict made at run time, as lists.
@adjoint(rt.dict_values_list)
def dict_values_list(y, d):
    d_bar += rt.dict_view_adjoint(y_bar, d, False)


@tangent(rt.dict_values_list)
def dict_values_list_dot(y, d):
    y_dot = rt.dict_view_tangent(d_dot, d, False)


@adjoint(rt.dict_items_list)
def dict_items_list(y, d):
    d_bar += rt.dict_view_adjoint(y_bar, d, True)


@tangent(rt.dict_items_list)
def dict_items_list_dot(y, d):
    y_dot = rt.dict_view_tangent(d_dot, d, True)


nondifferentiable(rt.dict_keys_list)
