"""MIOpen's test/pooling2d.hpp (``pooling2d_driver``): the data arguments of ``test_pooling2d`` per
dataset (0: the default shapes; 1: asymmetric windows and strides on one small input; 2: wide windows),
as ``poolkit.configs`` takes them (WORKAROUND_ISSUE_1670 on: dataset 1 pads only 0, 0)."""
from __future__ import annotations

from tests.upstream.miopen import poolkit

INPUT_SHAPES = [(1, 19, 1024, 2048), (10, 3, 32, 32), (5, 32, 8, 8), (2, 1024, 12, 12), (4, 3, 231, 231),
                (8, 3, 227, 227), (1, 384, 13, 13), (1, 96, 27, 27), (2, 160, 7, 7), (1, 192, 256, 512),
                (2, 192, 28, 28), (1, 832, 64, 128), (1, 256, 56, 56), (4, 3, 224, 224), (2, 64, 112, 112),
                (2, 608, 4, 4), (1, 2048, 11, 11), (1, 16, 4096, 4096)]
INPUT_SHAPES_MINIMAL = [(1, 4, 4, 4)]
INPUT_SHAPES_WIDE = [(1, 3, 255, 255), (2, 3, 227, 227), (1, 7, 127, 127), (1, 1, 410, 400)]
LENS = ([(2, 2), (3, 3)], [(2, 2), (1, 2), (2, 1)], [(35, 35), (100, 100), (255, 255), (410, 400)])
STRIDES = ([(2, 2), (1, 1)], [(1, 1), (2, 1), (1, 2), (2, 2)], [(1, 1)])
PADS = ([(0, 0), (1, 1)], [(0, 0)], [(0, 0)])


def args(dataset_id: int) -> dict:
    """The driver's arguments after index_type, mode and verify_indices, in its order (``input`` is
    generate_multi_data_limited with multiplier 9)."""
    shapes = (INPUT_SHAPES, INPUT_SHAPES_MINIMAL, INPUT_SHAPES_WIDE)[dataset_id]
    return {"input": (shapes, 9), "lens": LENS[dataset_id], "strides": STRIDES[dataset_id],
            "pads": PADS[dataset_id], "wsidx": [0, 1]}


def command(dtype: str, full_set: bool = False, dataset_id: int = 0, limit: int = 0, **fixed) -> list:
    """The configs of ``test_pooling2d <dtype> [--all] [--dataset N] [--limit N] [--name value ...]``
    (a fixed argument replaces that argument's data)."""
    a = args(dataset_id)
    for name, value in fixed.items():
        a[name] = [value]
    return poolkit.configs(dtype, full_set, dataset_id, a, limit=limit,
                           limited={"input"} if "input" not in fixed else ())
