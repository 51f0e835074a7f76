"""Shape classes: a function called with sizes that vary compiles once per class of shapes.

policy.py decides which argument dimensions are dynamic and keys calls by shape class; sizes.py
watches the user's decisions on sizes while tracing; builder.py builds a class program by
comparing builds at stand-in sizes (forms.py fits the sizes that differ as affine forms); and
instances.py makes the class program's graph at a call's sizes. Backends compile the kernels
once with the sizes as arguments (backends/cpu/dynamic.py).
"""
