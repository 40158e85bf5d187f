"""get_global_test_module.cc as a code object: for each of int, float, char and double a scalar
device global ``<type>_var`` and an array ``<type>_arr`` of kArraySize (5) elements, and for each
global a kernel ``<global>_address_validation_kernel(ptr, out)`` that sets ``*out`` to whether ``ptr``
is that global's address."""
from shm_layout.kernels import kernel

__hdemu_globals__ = {
    "int_var": "i32", "int_arr": "i32[5]",
    "float_var": "f32", "float_arr": "f32[5]",
    "char_var": "i8", "char_arr": "i8[5]",
    "double_var": "f64", "double_arr": "f64[5]",
}


def _same(ptr, glob) -> int:
    return int(ptr.__array_interface__["data"][0] == glob.__array_interface__["data"][0])


@kernel("u8* ptr, u8* out")
def int_var_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, int_var)  # noqa: F821 - bound by the loader


@kernel("u8* ptr, u8* out")
def int_arr_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, int_arr)  # noqa: F821


@kernel("u8* ptr, u8* out")
def float_var_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, float_var)  # noqa: F821


@kernel("u8* ptr, u8* out")
def float_arr_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, float_arr)  # noqa: F821


@kernel("u8* ptr, u8* out")
def char_var_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, char_var)  # noqa: F821


@kernel("u8* ptr, u8* out")
def char_arr_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, char_arr)  # noqa: F821


@kernel("u8* ptr, u8* out")
def double_var_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, double_var)  # noqa: F821


@kernel("u8* ptr, u8* out")
def double_arr_address_validation_kernel(ctx, ptr, out):
    out[0] = _same(ptr, double_arr)  # noqa: F821
