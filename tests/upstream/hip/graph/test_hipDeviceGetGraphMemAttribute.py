"""hipDeviceGetGraphMemAttribute (and Set, Trim): the graph memory pool's counters after launches of
graphs that keep or free their allocation, before and after trimming, and argument errors. Sizes are
scaled down to the ported platform's memory."""
import pytest

from hostside import hip
from tests.upstream.hip.graph._common import expect_error
from tests.upstream.hip.graph._mem_node_common import ELEMENTS, alloc_params, attrs, reset_attrs

UPSTREAM = "ROCm/hip-tests:catch/unit/graph/hipDeviceGetGraphMemAttribute.cc"

E = hip.hipError_t
NBYTES = ELEMENTS * 4


def _create(with_free):
    """createGraph: an alloc node (and its free node); (exec, address)."""
    graph = hip.hipGraphCreate(0)
    p = alloc_params(NBYTES)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    if with_free:
        hip.hipGraphAddMemFreeNode(graph, alloc, p.dptr)
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphDestroy(graph)
    return exe, p.dptr


def _check(used, high):
    """checkGraphMemAttribute: used and reserved == ``used``, both highs == ``high``."""
    assert attrs() == (used, high, used, high)


def test_Unit_hipDeviceGetGraphMemAttribute_Positive_DoubleMemory(mod, res):
    stream = res.stream()
    exe1, p1 = _create(False)
    hip.hipGraphLaunch(exe1, stream)
    hip.hipStreamSynchronize(stream)
    _check(NBYTES, NBYTES)
    exe2, p2 = _create(False)
    hip.hipGraphLaunch(exe2, stream)
    hip.hipStreamSynchronize(stream)
    _check(2 * NBYTES, 2 * NBYTES)
    hip.hipFree(p1)
    hip.hipFree(p2)
    hip.hipGraphExecDestroy(exe1)
    hip.hipGraphExecDestroy(exe2)
    hip.hipDeviceGraphMemTrim(0)
    _check(0, 2 * NBYTES)
    reset_attrs()


def test_Unit_hipDeviceGetGraphMemAttribute_Positive_ReuseMemory(mod, res):
    stream = res.stream()
    exe1, _ = _create(True)
    hip.hipGraphLaunch(exe1, stream)
    hip.hipStreamSynchronize(stream)
    _check(0, NBYTES)
    exe2, _ = _create(True)
    hip.hipGraphLaunch(exe2, stream)
    hip.hipStreamSynchronize(stream)
    _check(0, NBYTES)
    hip.hipGraphExecDestroy(exe1)
    hip.hipGraphExecDestroy(exe2)
    hip.hipDeviceGraphMemTrim(0)
    _check(0, NBYTES)
    reset_attrs()


@pytest.mark.parametrize("section", ["device", "attr"])
def test_Unit_hipDeviceGetGraphMemAttribute_Negative_Parameters(mod, section):
    # "Get value is nullptr" has no Python form (the value is the result)
    hip.hipSetDevice(0)
    if section == "device":
        expect_error(E.hipErrorInvalidDevice, hip.hipDeviceGetGraphMemAttribute, hip.hipGetDeviceCount(),
                     hip.hipGraphMemAttrUsedMemHigh)
    else:
        expect_error(E.hipErrorInvalidValue, hip.hipDeviceGetGraphMemAttribute, 0, 0x7)
    reset_attrs()


def _functional(device):
    """Unit_hipDeviceGetGraphMemAttribute_Functional's body on ``device``: every section in turn."""
    nbytes = 4 * 1024 * 1024                      # upstream: 512 MiB
    hip.hipSetDevice(device)
    hip.hipDeviceGraphMemTrim(device)
    graph = hip.hipGraphCreate(0)
    stream = hip.hipStreamCreate()
    p = alloc_params(nbytes, device)
    alloc = hip.hipGraphAddMemAllocNode(graph, None, p)
    assert p.dptr
    hip.hipGraphAddMemFreeNode(graph, alloc, p.dptr)
    assert attrs(device) == (0, 0, 0, 0), "before launching the graph"
    exe = hip.hipGraphInstantiate(graph)
    hip.hipGraphLaunch(exe, stream)
    hip.hipStreamSynchronize(stream)
    assert attrs(device) == (0, nbytes, 0, nbytes), "after launching, before destroying the graph"
    hip.hipGraphDestroy(graph)
    hip.hipGraphExecDestroy(exe)
    hip.hipStreamDestroy(stream)
    assert attrs(device) == (0, nbytes, 0, nbytes), "after destroying the graph"
    hip.hipDeviceGraphMemTrim(device)
    assert attrs(device) == (0, nbytes, 0, nbytes), "after destroying the graph and trimming"
    hip.hipDeviceSetGraphMemAttribute(device, hip.hipGraphMemAttrUsedMemHigh, 0)
    hip.hipDeviceSetGraphMemAttribute(device, hip.hipGraphMemAttrReservedMemHigh, 0)
    assert attrs(device) == (0, 0, 0, 0), "after the trim and the reset to 0"
    reset_attrs(device)
    hip.hipSetDevice(0)


def test_Unit_hipDeviceGetGraphMemAttribute_Functional(mod):
    assert hip.hipDeviceGetAttribute(hip.hipDeviceAttribute_t.hipDeviceAttributeMemoryPoolsSupported, 0)
    _functional(0)


def test_Unit_hipDeviceGetGraphMemAttribute_Functional_Multi_Device(mod):
    for d in range(hip.hipGetDeviceCount()):
        _functional(d)


@pytest.mark.parametrize("section", ["negative_device", "int_max_device", "attr_99"])
def test_Unit_hipDeviceGetGraphMemAttribute_Negative(mod, section):
    # "value pointer nullptr" has no Python form
    args = {"negative_device": (E.hipErrorInvalidDevice, -1, hip.hipGraphMemAttrUsedMemCurrent),
            "int_max_device": (E.hipErrorInvalidDevice, 2**31 - 1, hip.hipGraphMemAttrUsedMemCurrent),
            "attr_99": (E.hipErrorInvalidValue, 0, 99)}[section]
    expect_error(args[0], hip.hipDeviceGetGraphMemAttribute, *args[1:])
    reset_attrs()


@pytest.mark.parametrize("section", ["negative_device", "int_max_device", "used_current", "reserved_current",
                                     "null_value", "minus_one_value"])
def test_Unit_hipDeviceSetGraphMemAttribute_Negative(mod, section):
    # "value pointer -1" (a bad pointer) is the -1 value here
    args = {"negative_device": (E.hipErrorInvalidDevice, -3, hip.hipGraphMemAttrUsedMemCurrent, 0),
            "int_max_device": (E.hipErrorInvalidDevice, 2**31 - 1, hip.hipGraphMemAttrUsedMemCurrent, 0),
            "used_current": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrUsedMemCurrent, 0),
            "reserved_current": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrReservedMemCurrent, 0),
            "null_value": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrUsedMemCurrent, None),
            "minus_one_value": (E.hipErrorInvalidValue, 0, hip.hipGraphMemAttrUsedMemCurrent, -1)}[section]
    expect_error(args[0], hip.hipDeviceSetGraphMemAttribute, *args[1:])
    reset_attrs()
