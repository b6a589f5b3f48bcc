"""DLPack and include/tsaot.h as ctypes structures, and the dtype tables
between them, numpy and torch (the standard library only: numpy and torch
are imported where a value of theirs is met)."""
import ctypes

# DLDeviceType and DLDataTypeCode of DLPack; kDLBool is DLPack 0.8's, which
# the runtime takes for bool (runtime/aot.c).
kDLCPU, kDLCUDA = 1, 2
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, kDLBool = 0, 1, 2, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class Spec(ctypes.Structure):
    """tsaot_spec."""
    _fields_ = [("kind", ctypes.c_int32), ("dtype", DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


# include/tsaot.h's return codes and spec kinds
RC_NAMES = {1: "TSAOT_E_INPUT", 2: "TSAOT_E_RUN", 3: "TSAOT_E_ARENA", 4: "TSAOT_E_OUTPUT", 5: "TSAOT_E_INIT",
            6: "TSAOT_E_DEVICE"}
E_OUTPUT = 4
SPEC_TENSOR, SPEC_INT, SPEC_FLOAT, SPEC_BOOL, SPEC_NONE, SPEC_LENGTH, SPEC_STR, SPEC_LIST = range(8)
SPEC_OPTIONAL, SPEC_KIND_MASK = 0x100, 0xFF
SPEC_KINDS = ("tensor", "int", "float", "bool", "none", "length", "str", "list")

# (code, bits) -> (numpy dtype name or None, tsaot's short name, torch dtype name)
DTYPES = {
    (kDLBool, 8): ("bool", "bool", "bool"),
    (kDLUInt, 8): ("uint8", "u8", "uint8"),
    (kDLInt, 8): ("int8", "i8", "int8"),
    (kDLInt, 16): ("int16", "i16", "int16"),
    (kDLInt, 32): ("int32", "i32", "int32"),
    (kDLInt, 64): ("int64", "i64", "int64"),
    (kDLFloat, 16): ("float16", "f16", "float16"),
    (kDLBfloat, 16): (None, "bf16", "bfloat16"),
    (kDLFloat, 32): ("float32", "f32", "float32"),
    (kDLFloat, 64): ("float64", "f64", "float64"),
    (kDLComplex, 64): ("complex64", "c64", "complex64"),
    (kDLComplex, 128): ("complex128", "c128", "complex128"),
}
NUMPY_TO_DL = {v[0]: k for k, v in DTYPES.items() if v[0]}
TORCH_TO_DL = {v[2]: k for k, v in DTYPES.items()}

# PyTorch's words for a numpy array it cannot take (torch.from_numpy)
NUMPY_REFUSED = ("can't convert np.ndarray of type %s. The only supported types are: float64, float32, float16, "
                 "complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
