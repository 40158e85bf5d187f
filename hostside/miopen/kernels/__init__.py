"""The kernel sources of hostside.miopen: Python kernel templates, not modules to import.

Each ``MIOpen*.py`` here is the source of a program. Compiling it (``hostside.miopen._program``)
replaces its build-parameter block with the program's ``-D`` defines and every ``#include "name"``
line with that file of this folder, giving the text of one code object that ``hipModuleLoadData``
loads. ``pooling_functions.py`` is the shared part (MIOpen's pooling_functions.h / float_types.h).
"""
