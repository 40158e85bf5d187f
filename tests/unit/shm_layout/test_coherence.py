"""The coherence model: SVM hides a missing write-back, non-SVM shows it; a bulk write-back rolls
back device-owned fields; the barrier checker flags a publish with no wmb()."""
import numpy as np
import pytest

from shm_layout.coherence import (BarrierChecker, BarrierViolation, SharedRegion, data_written,
                                  publish, wmb)
from shm_layout._dtype import checked_dtype

HDR = checked_dtype("toy_queue_header", [
    ("head", "<u4", 0),    # host writes
    ("tail", "<u4", 64),   # device writes
], itemsize=128, align_hot=("head", "tail"))


def regions(svm):
    dev = np.zeros(HDR.itemsize, np.uint8)
    host = None if svm else np.zeros(HDR.itemsize, np.uint8)
    r = SharedRegion(dev, host, svm)
    return r, r.device.view(HDR)[0:1], r.host.view(HDR)[0:1]


@pytest.mark.parametrize("svm", [True, False])
def test_host_write_reaches_device_only_through_write_range(svm):
    r, dev, host = regions(svm)
    host["head"] = 5
    assert int(dev["head"][0]) == (5 if svm else 0)   # non-SVM: not yet visible
    r.write_range_to_device(0, 4)
    assert int(dev["head"][0]) == 5


@pytest.mark.parametrize("svm", [True, False])
def test_device_write_reaches_host_only_through_read_range(svm):
    r, dev, host = regions(svm)
    dev["tail"] = 9
    assert int(host["tail"][0]) == (9 if svm else 0)
    r.read_range_from_device(64, 4)
    assert int(host["tail"][0]) == 9


def test_bulk_write_back_rolls_back_device_owned_fields():
    r, dev, host = regions(svm=False)
    r.read_range_from_device(0, HDR.itemsize)   # host mirror in sync: tail 0
    dev["tail"] = 7                              # the device advances its tail meanwhile
    host["head"] = 3
    r.write_range_to_device(0, HDR.itemsize)     # the mistake: write back the whole header
    assert int(dev["head"][0]) == 3
    assert int(dev["tail"][0]) == 0, "a bulk write-back must visibly roll back the device's tail"
    # the right way: only the field the host owns
    dev["tail"] = 7
    host["head"] = 4
    r.write_range_to_device(0, 4)
    assert int(dev["tail"][0]) == 7 and int(dev["head"][0]) == 4


def test_ranges_are_validated():
    r, _d, _h = regions(svm=False)
    with pytest.raises(ValueError, match="must lie within"):
        r.write_range_to_device(120, 16)


def test_barrier_checker_flags_publish_without_wmb():
    BarrierChecker.enable(strict=True)
    try:
        data_written()
        wmb()
        publish("tail")                     # fine
        data_written()
        with pytest.raises(BarrierViolation, match="no wmb"):
            publish("tail")
    finally:
        BarrierChecker.disable()
