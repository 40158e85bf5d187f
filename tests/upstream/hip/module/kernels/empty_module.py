"""empty_module.cc as a code object: a module with no kernels at all (hip-tests loads it to check
that hipModuleLoad / hipModuleLoadData accept a valid image that defines nothing)."""
