"""The objects and destructors of hip-tests' user-object cases (destroyIntObj, destroyFloatObj,
destroyClassObj, destroyStructObj): each destructor notes the object it was given, so a case can also
check that it ran exactly once."""
from __future__ import annotations

import pytest


class BoxClass:
    def __init__(self):
        self.x = 0


class BoxStruct:
    def __init__(self):
        self.count = 0


#: the SECTIONs "Called with int / float / Class / Struct Object"
OBJECTS = [pytest.param(int, id="int"), pytest.param(float, id="float"), pytest.param(BoxClass, id="Class"),
           pytest.param(BoxStruct, id="Struct")]


class Destroyed(list):
    """A destructor (``destroyIntObj`` and friends): calling it appends the object it was given."""

    def __call__(self, obj):
        self.append(obj)
