"""The kernel compiler's Python side: the `ast` walker that drives the C++ IR builder, its errors, and
`compile(ASTSource(...))`."""
from .code_generator import CodeGenerator, generate
from .compiler import ASTSource, CompiledKernel, compile
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

__all__ = ["ASTSource", "CodeGenerator", "CompilationError", "CompileTimeAssertionFailure", "CompiledKernel",
           "UnsupportedLanguageConstruct", "compile", "generate"]
