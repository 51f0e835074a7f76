"""Vector memory access for generated CUDA kernels: 8- and 16-byte loads and stores through a raw
pointer (ld.global.v4.f32 and the like), and a pointer's address, as numba intrinsics.

numba has no vector load: `p[i]` on a pointer is one scalar load, and the NVPTX backend merges
adjacent loads only where it can prove their alignment, which it cannot for a pointer argument.
Generated kernels call these where the generator proved the offsets are multiples of the lane
count and the kernel checked at run time that the base addresses are 16-byte aligned.

Under numba's CUDA simulator (which runs kernels as Python over NumPy arrays) the same names are
plain Python functions with the same meaning, so the simulator tests the kernels' logic.
"""
from __future__ import annotations

import numpy as np
from numba import config


def _simulator_functions():
    def address(array):
        return array.__array_interface__["data"][0]

    def load(array, index, lanes):
        return tuple(array[index + lane] for lane in range(lanes))

    def store(array, index, values):
        for lane, value in enumerate(values):
            array[index + lane] = value

    def shared_load4(array, index):
        assert index % 4 == 0, f"a 16-byte shared read at element {index} is misaligned"
        return load(array.reshape(-1), index, 4)

    def shared_store4(array, index, *values):
        assert index % 4 == 0, f"a 16-byte shared write at element {index} is misaligned"
        flat = array.reshape(-1)
        assert np.shares_memory(flat, array)
        store(flat, index, values)

    return {"address": address,
            "vload2": lambda a, i: load(a, i, 2), "vload4": lambda a, i: load(a, i, 4),
            "vstore2": lambda a, i, *v: store(a, i, v), "vstore4": lambda a, i, *v: store(a, i, v),
            "sload4": shared_load4, "sstore4": shared_store4}


def _intrinsics():
    from llvmlite import ir
    from numba import types
    from numba.core.extending import intrinsic

    @intrinsic
    def address(typingctx, pointer):
        """The pointer's address as an unsigned 64-bit integer."""
        if not isinstance(pointer, types.CPointer):
            return None

        def codegen(context, builder, signature, args):
            return builder.ptrtoint(args[0], ir.IntType(64))
        return types.uint64(pointer), codegen

    def make_load(lanes: int):
        @intrinsic
        def vload(typingctx, pointer, index):
            """`lanes` consecutive elements from pointer[index] in one aligned vector load."""
            if not isinstance(pointer, types.CPointer) or not isinstance(index, types.Integer):
                return None
            result = types.UniTuple(pointer.dtype, lanes)

            def codegen(context, builder, signature, args):
                base, offset = args
                element = context.get_value_type(pointer.dtype)
                vector = ir.VectorType(element, lanes)
                offset = context.cast(builder, offset, signature.args[1], types.intp)
                address = builder.gep(base, [offset])
                cast = builder.bitcast(address, vector.as_pointer())
                loaded = builder.load(cast, align=lanes * context.get_abi_sizeof(element))
                # NOTE: kernels never write their inputs (results are new arrays), so a load
                # may take the read-only path (ld.global.nc).
                loaded.set_metadata("invariant.load", builder.module.add_metadata([]))
                values = [builder.extract_element(loaded, ir.Constant(ir.IntType(32), lane))
                          for lane in range(lanes)]
                return context.make_tuple(builder, result, values)
            return result(pointer, index), codegen
        return vload

    def store_codegen(lanes: int):
        def codegen(context, builder, signature, args):
            base, offset, *items = args
            pointer = signature.args[0]
            element = context.get_value_type(pointer.dtype)
            vector = ir.VectorType(element, lanes)
            packed = ir.Constant(vector, ir.Undefined)
            for lane, (item, kind) in enumerate(zip(items, signature.args[2:])):
                item = context.cast(builder, item, kind, pointer.dtype)
                packed = builder.insert_element(packed, item, ir.Constant(ir.IntType(32), lane))
            offset = context.cast(builder, offset, signature.args[1], types.intp)
            address = builder.gep(base, [offset])
            cast = builder.bitcast(address, vector.as_pointer())
            builder.store(packed, cast, align=lanes * context.get_abi_sizeof(element))
            return context.get_dummy_value()
        return codegen

    def storable(pointer, index) -> bool:
        return isinstance(pointer, types.CPointer) and isinstance(index, types.Integer)

    @intrinsic
    def vstore2(typingctx, pointer, index, v0, v1):
        """Two values to pointer[index], pointer[index + 1] in one aligned store."""
        if storable(pointer, index):
            return types.void(pointer, index, v0, v1), store_codegen(2)

    @intrinsic
    def vstore4(typingctx, pointer, index, v0, v1, v2, v3):
        """Four values to pointer[index:index + 4] in one aligned store."""
        if storable(pointer, index):
            return types.void(pointer, index, v0, v1, v2, v3), store_codegen(4)

    def shared_pointer(context, builder, array_type, array, index):
        """<4 x T> addrspace(3)* to flat element `index` of a shared array."""
        data = context.make_array(array_type)(context, builder, array).data
        element = context.get_value_type(array_type.dtype)
        typed = builder.addrspacecast(data, ir.PointerType(element, 3))
        offset = context.cast(builder, index[1], index[0], types.intp)
        return builder.bitcast(builder.gep(typed, [offset]),
                               ir.PointerType(ir.VectorType(element, 4), 3)), element

    @intrinsic
    def sload4(typingctx, array, index):
        """Four consecutive elements of a C-contiguous shared array from flat element `index`
        (a multiple of 4) in one ld.shared.v4."""
        if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
            return None
        result = types.UniTuple(array.dtype, 4)

        def codegen(context, builder, signature, args):
            pointer, element = shared_pointer(context, builder, signature.args[0], args[0],
                                              (signature.args[1], args[1]))
            loaded = builder.load(pointer, align=4 * context.get_abi_sizeof(element))
            return context.make_tuple(builder, result, [builder.extract_element(
                loaded, ir.Constant(ir.IntType(32), lane)) for lane in range(4)])
        return result(array, index), codegen

    @intrinsic
    def sstore4(typingctx, array, index, v0, v1, v2, v3):
        """Four values to flat elements index..index+3 of a shared array in one st.shared.v4."""
        if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            pointer, element = shared_pointer(context, builder, signature.args[0], args[0],
                                              (signature.args[1], args[1]))
            packed = ir.Constant(ir.VectorType(element, 4), ir.Undefined)
            for lane, (item, kind) in enumerate(zip(args[2:], signature.args[2:])):
                item = context.cast(builder, item, kind, signature.args[0].dtype)
                packed = builder.insert_element(packed, item, ir.Constant(ir.IntType(32), lane))
            builder.store(packed, pointer, align=4 * context.get_abi_sizeof(element))
            return context.get_dummy_value()
        return types.void(array, index, v0, v1, v2, v3), codegen

    return {"address": address, "vload2": make_load(2), "vload4": make_load(4),
            "sload4": sload4, "sstore4": sstore4,
            "vstore2": vstore2, "vstore4": vstore4}


globals().update(_simulator_functions() if config.ENABLE_CUDASIM else _intrinsics())
