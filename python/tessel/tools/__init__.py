"""Command-line tools. `python -m tessel.tools.compile` is the ahead-of-time compiler: it builds a kernel into an
object file plus a C header and launcher, to be linked into programs that do not embed Python."""
