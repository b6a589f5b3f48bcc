"""tsaot from Python: compile a TorchScript model and run the library.

    import tsaot
    tsaot.compile("model.pt", "model.so", example=[x])   # or input=["f32[1,3,224,224]"]
    m = tsaot.load("model.so")
    y = m(x)                      # numpy in, numpy out; torch tensors too
    ys = m.run(x, as_torch=True)  # a list of torch tensors

Pure Python over ctypes (numpy needed; torch where present). Inputs and
outputs cross without a copy (DLPack); README.md beside this file says
more.
"""
from ._args import Error
from ._compile import CompileWarning, compile, find_compiler
from ._model import Input, Model, Spec, load

__all__ = ["CompileWarning", "Error", "Input", "Model", "Spec", "compile", "find_compiler", "load"]
