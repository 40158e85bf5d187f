"""Start the embedded platform, then fail with an exception: the platform must still be torn down.

Result (printed before it raises): {"pid": this process}.
"""
import os

from hostside import hip
from tests.scenarios.common import emit, kernel_file

hip.hipModuleLoad(kernel_file("basic.py"))
emit(pid=os.getpid())
raise RuntimeError("user code failed")
