"""The kernel compiler's Python side: the `ast` walker that drives the C++ IR builder, and its errors."""
from .code_generator import CodeGenerator, generate
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["CodeGenerator", "CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct",
           "generate"]
