"""numba emits machine code only for the functions that something calls.

Why
---
numba finalises every function it compiles: it optimises the function's LLVM
module, adds it to the execution engine and emits its machine code. PyTensor
compiles a model's graph as hundreds of small numba functions (one per node,
each with ``no_cpython_wrapper`` and ``no_cfunc_wrapper``) that only the
function of the whole graph calls, and numba's own overloads are compiled
the same way. A caller links its callees' optimised LLVM in and compiles it
again, so the callees' own machine code is never run. Emitting it was about a
third of a model's cold compile (``benchmarks/compile.py``).

It also made the draws depend on the cache. The engine resolves a caller's
linked copy of a callee (``linkonce_odr``) to the callee's machine code when
that is already loaded, and to the caller's own copy when it is not. A
compile in a fresh process took the first; nutpie's machine code loaded
from :mod:`compare.accel.compiled_cache` in a new process, the second. The two
differ in the last bits (fast-math contractions), and a NUTS trajectory
turns that into other draws: the Gaussian process drew different samples
for one seed after a cold compile and after a load (numba 0.68), as does a
small model with its Matern kernel (``tests/compare/accel/test_numba_lazy_code.py``).

What
----
A library whose module defines no CPython wrapper is finalised without being
added to the engine: its module stays available for linking, and its
machine code is emitted only if something asks the engine for one of its
symbols (a function pointer, an address, a declaration of a module that is
added, a recursive reference). The callers then always run their own
copies, cold or loaded. numba also gives every jitted function a C wrapper
(for first-class function values): numba's overloads and PyTensor's helpers
keep theirs, nothing asks for them while a model compiles, and a
``numba.cfunc`` (nutpie's two functions) asks for its own at once. Counting
those wrappers as entry points had 259 of the classifier's 749 libraries
optimised and emitted for nothing: its cold compile in a new process took
55 s with them, 49 s without.

Nor is a deferred module optimised as a whole (numba's per-function passes
still run): every caller optimises what it linked in with itself, so a callee
four levels down (a scalar op in an Elemwise in a graph in nutpie's
function) was optimised four times. A deferred library asked for its code
is optimised then, as numba would have at its finalisation; an entry
point's module at once. An entry point's linked copies become ``internal``:
the engine cannot swap them for another module's code, and LLVM may inline
or drop them as it sees fit (sampling took 0.93x the time it did over the 14 models;
0.56-0.77x for naive Bayes, the classifier and the mixture).

- ``Environment`` pointers of deferred functions are written into the
  engine when a module that defines them is added (a caller that linked the
  function in), and again if the function itself is added later.
- numba's on-disk cache saves a deferred function as LLVM bitcode (numba's
  own ``'bitcode'`` kind) instead of object code it never emitted, and a
  loaded one is deferred the same way; one emitted since is saved as its
  machine code (its optimised bitcode would be optimised again when loaded,
  into other machine code: the Dirichlet and classifier models drew other
  samples after a load when it was). Every key this process writes or
  reads carries :data:`TAG` (numba's ``magic_tuple``, part of each key):
  numba as released, in a user's plain PyMC script sharing PyTensor's cache
  folder, would run these not-yet-optimised functions as they are, and this
  process would add its object code to the engine. The two keep their own
  entries in the same files.

The patch is applied when ``numba.core.codegen`` is first imported (an
import hook: :mod:`compare.accel._hooks`), so light commands that never
import numba do not pay for it. ``BAYES_COMPARE_EAGER_NUMBA=1`` leaves numba
as it is (for a report to numba, or ``benchmarks/compile.py``'s other side).
"""

from __future__ import annotations

import sys
import weakref
from types import ModuleType
from typing import Any

from compare.accel._hooks import patch_on_import

#: This accelerator's name in :data:`compare.accel.ACCELERATORS`.
NAME = "numba-lazy-code"

_MODULE = "numba.core.codegen"
_PATCHED = "_bayes_compare_lazy_code"
#: Attribute of a deferred library: the module whose symbols it defines.
_DEFERRED = "_bayes_compare_deferred"
#: Added to numba's ``magic_tuple``, part of every key of its on-disk cache.
TAG = "bayes-compare-lazy-code-2"
#: Prefix of numba's entry points (``FunctionDescriptor.llvm_cpython_wrapper_name``; a
#: C wrapper, ``llvm_cfunc_wrapper_name``, is not one: see module) and of its
#: Environment globals.
_CPYTHON = "_ZN7cpython"
_ENV = "_ZN08NumbaEnv"
#: The attribute numba's object-cache hooks read on a module (``CPUCodeLibrary``'s
#: private ``__library``).
_LIBRARY_OF_MODULE = "_CPUCodeLibrary__library"

STATS = {"deferred": 0, "materialized": 0}


def patch(codegen: ModuleType) -> None:
    """Make ``JITCodeLibrary`` emit machine code lazily (once)."""
    if getattr(codegen, _PATCHED, False):
        return
    from llvmlite import binding as ll  # heavy: llvmlite, loaded with numba
    from numba.core.compiler_lock import global_compiler_lock  # heavy: numba, already loaded

    linkonce_odr = ll.Linkage.linkonce_odr

    library_class = codegen.JITCodeLibrary
    engine_class = codegen.JitEngine
    codegen_class = codegen.JITCPUCodegen
    unresolved_prefix = codegen.RuntimeLinker.PREFIX

    #: symbol -> the deferred library that defines it
    owners: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
    #: Environment global -> the Environment numba asked to write into it
    environments: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()

    optimize_final_module = library_class._optimize_final_module
    finalize_final_module = library_class._finalize_final_module
    finalize_specific = library_class._finalize_specific
    pointer_to_function = library_class.get_pointer_to_function
    serialize_using_object_code = library_class.serialize_using_object_code
    magic_tuple = codegen_class.magic_tuple
    set_env = codegen_class.set_env
    is_symbol_defined = engine_class.is_symbol_defined
    function_address = engine_class.get_function_address
    global_value_address = engine_class.get_global_value_address

    def link_only(codegen_: Any, module: Any) -> bool:
        """No entry point, no unresolved reference either way: nothing calls its own code."""
        pending = codegen_._rtlinker._unresolved
        defined = 0
        for fn in module.functions:
            if fn.is_declaration:
                continue
            if fn.name.startswith(_CPYTHON) or fn.name in pending:
                return False
            defined += 1
        return defined > 0 and not any(
            gv.name.startswith(unresolved_prefix) for gv in module.global_variables
        )

    def defer(library: Any, module: Any) -> None:
        setattr(library, _DEFERRED, module)
        for fn in module.functions:
            if not fn.is_declaration:
                owners[fn.name] = library
        for gv in module.global_variables:
            if not gv.is_declaration and not gv.name.startswith(_ENV):
                owners[gv.name] = library
        STATS["deferred"] += 1

    def add_owners_of_declarations(module: Any) -> None:
        """Before ``module`` joins the engine: add the deferred libraries it refers to."""
        for fn in module.functions:
            if fn.is_declaration and fn.name in owners:
                materialize(owners[fn.name])
        for gv in module.global_variables:
            if gv.is_declaration and gv.name in owners:
                materialize(owners[gv.name])

    def materialize(library: Any) -> None:
        """Add a deferred library to the engine, as numba would have at its finalisation.

        No ``finalize_object`` here: it would emit, too early, the module of a
        caller that is being added (numba asks for ``nrt_unresolved_abort``
        in the middle of that). The engine emits an added module's code when
        one of its symbols is looked up, or at the next ``finalize_object``.
        """
        with global_compiler_lock:
            module = library.__dict__.pop(_DEFERRED, None)
            if module is None:
                return
            internal_copies(module)
            optimize_final_module(library)  # what numba does at finalisation, deferred to here
            add_owners_of_declarations(module)
            library._codegen._add_module(module)
            library._codegen._scan_and_fix_unresolved_refs(module)
            write_environments(library._codegen, module)
            STATS["materialized"] += 1

    def write_environments(codegen_: Any, module: Any) -> None:
        for gv in module.global_variables:
            env = environments.get(gv.name)
            if env is not None and not gv.is_declaration:
                set_env(codegen_, gv.name, env)

    def internal_copies(module: Any) -> None:
        """An entry point runs its own copies of what it linked in, whatever else
        the engine holds: the engine would otherwise resolve a copy (linkonce_odr,
        a weak symbol) to another module's code when one is loaded, which differs
        in the last bits (see module)."""
        for fn in module.functions:
            if not fn.is_declaration and fn.linkage == linkonce_odr:
                fn.linkage = "internal"

    def _optimize_final_module(self: Any) -> None:
        if type(self) is library_class:
            if link_only(self._codegen, self._final_module):
                return  # its callers optimise it with themselves, after linking it in
            internal_copies(self._final_module)
        optimize_final_module(self)

    def _finalize_final_module(self: Any) -> None:
        if type(self) is library_class and link_only(self._codegen, self._final_module):
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            setattr(self._final_module, _LIBRARY_OF_MODULE, weakref.proxy(self))
            self._finalized = True
            defer(self, self._final_module)
            return
        add_owners_of_declarations(self._final_module)
        finalize_final_module(self)

    def _finalize_specific(self: Any) -> None:
        finalize_specific(self)
        write_environments(self._codegen, self._final_module)

    def get_pointer_to_function(self: Any, name: str) -> int:
        self._ensure_finalized()
        deferred = self.__dict__.get(_DEFERRED)
        if deferred is not None:
            try:
                fn = deferred.get_function(name)
            except NameError:
                fn = None
            if fn is not None and not fn.is_declaration:
                materialize(self)
        return int(pointer_to_function(self, name))

    def _serialize_using_object_code(self: Any) -> Any:
        self._ensure_finalized()
        if self.__dict__.get(_DEFERRED) is not None:
            # Never emitted: its module as finalised, not yet optimised; a load
            # defers it again. (The bitcode of an optimised module would be
            # optimised a second time when loaded, into other machine code.)
            return self.serialize_using_bitcode()
        if self._object_caching_enabled and self._compiled_object is None:
            # Added to the engine when asked for but not emitted yet.
            with global_compiler_lock:
                self._codegen._engine.finalize_object()
        return serialize_using_object_code(self)

    def _magic_tuple(self: Any) -> tuple[Any, ...]:
        return (*magic_tuple(self), TAG)

    def _set_env(self: Any, env_name: str, env: Any) -> None:
        environments[env_name] = env
        if is_symbol_defined(self._engine, env_name):
            set_env(self, env_name, env)
        # else: written when a module defining it joins the engine (_finalize_specific)

    def _is_symbol_defined(self: Any, name: str) -> bool:
        if name in owners:
            materialize(owners[name])
        return bool(is_symbol_defined(self, name))

    def _get_function_address(self: Any, name: str) -> int:
        if name in owners:
            materialize(owners[name])
        return int(function_address(self, name))

    def _get_global_value_address(self: Any, name: str) -> int:
        if name in owners:
            materialize(owners[name])
        return int(global_value_address(self, name))

    library_class._optimize_final_module = _optimize_final_module
    library_class._finalize_final_module = _finalize_final_module
    library_class._finalize_specific = _finalize_specific
    library_class.get_pointer_to_function = get_pointer_to_function
    library_class.serialize_using_object_code = _serialize_using_object_code
    codegen_class.magic_tuple = _magic_tuple
    codegen_class.set_env = _set_env
    engine_class.is_symbol_defined = _is_symbol_defined
    engine_class.get_function_address = _get_function_address
    engine_class.get_global_value_address = _get_global_value_address
    setattr(codegen, _PATCHED, True)


def tag() -> str | None:
    """:data:`TAG` if numba is patched in this process, else None (for cache keys)."""
    codegen = sys.modules.get(_MODULE)
    return TAG if codegen is not None and getattr(codegen, _PATCHED, False) else None


def install() -> None:
    """Patch numba's code libraries now if they are loaded, else as soon as they are imported."""
    patch_on_import(_MODULE, NAME, patch)
