"""Vector memory access for generated CUDA kernels: loads and stores of 2, 4 or 8 elements (up to
16 bytes) through a raw pointer (ld.global.v4.f32 and the like), and a pointer's address, as
numba intrinsics.

numba has no vector load: `p[i]` on a pointer is one scalar load, and the NVPTX backend merges
adjacent loads only where it can prove their alignment, which it cannot for a pointer argument.
Generated kernels call these where the generator proved the offsets are multiples of the lane
count and the base addresses are 16-byte aligned: checked by the kernel at run time, or, for
arguments that were aligned at the signature's first call (Tuning.assume_aligned), by the
program before each launch (runtime/program.py hands a call where one is not to a program
built for it).

`hinted_load(lanes, qualifier)` and `hinted_store(lanes, qualifier)` make the same accesses with
PTX cache qualifiers, as inline PTX (NVVM has no other way to ask for them): split reductions'
reads of data read once (Tuning.reduce_loads), rows kernels' second read of a held row and their
stores in program order (Tuning.row_reload, row_stores).

`launch_dependents()` and `wait_for_prerequisite()` are PTX `griddepcontrol` (sm_90): kernels
begin with them (Tuning.overlap) so that, launched with programmatic stream serialization
(runtime/host.py), the next kernel launches while this one's last blocks run.

Under numba's CUDA simulator (which runs kernels as Python over NumPy arrays) the same names are
plain Python functions with the same meaning, so the simulator tests the kernels' logic.
"""
from __future__ import annotations

from numba import config


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

    def words(vector, width: int):
        """The type a vector of `width` bytes moves as: 16 bytes of 1- or 2-byte elements as four
        32-bit words (NVPTX splits <8 x half> into two 8-byte accesses), others as themselves."""
        return ir.VectorType(ir.IntType(32), 4) if width == 16 and vector.count > 4 else vector

    def _split_word(builder, word) -> list:
        """The two 16-bit halves of a 32-bit word (low first), by PTX's `mov.b32 {lo, hi}`: the
        register's halves as they are, where shifts cost the compiler PRMT/SHF instructions."""
        bits = ir.IntType(16)
        pair = ir.LiteralStructType([bits, bits])
        asm = ir.InlineAsm(ir.FunctionType(pair, [ir.IntType(32)]), "mov.b32 {$0, $1}, $2;",
                           "=h,=h,r")
        split = builder.call(asm, [word])
        return [builder.extract_value(split, 0), builder.extract_value(split, 1)]

    def _join_word(builder, halves: list):
        """_split_word's inverse: `mov.b32 word, {lo, hi}`."""
        bits = ir.IntType(16)
        asm = ir.InlineAsm(ir.FunctionType(ir.IntType(32), [bits, bits]), "mov.b32 $0, {$1, $2};",
                           "=r,h,h")
        return builder.call(asm, halves)

    def narrow_from_words(builder, loaded: list, element, itemsize: int, lanes: int) -> list:
        """`lanes` elements of 1 or 2 bytes from 32-bit words (little-endian): 2-byte ones by
        _split_word, others by shifts (a bitcast of a loaded vector would be
        folded back into a split load)."""
        per_word = 4 // itemsize
        if itemsize == 2:
            return [builder.bitcast(half, element) for word in loaded[:lanes // 2]
                    for half in _split_word(builder, word)]
        values = []
        for lane in range(lanes):
            word = loaded[lane // per_word]
            shift = (lane % per_word) * 8 * itemsize
            if shift:
                word = builder.lshr(word, ir.Constant(ir.IntType(32), shift))
            values.append(builder.bitcast(builder.trunc(word, ir.IntType(8 * itemsize)), element))
        return values

    def narrow_to_words(builder, items: list, itemsize: int) -> list:
        """narrow_from_words' inverse."""
        per_word = 4 // itemsize
        if itemsize == 2:
            return [_join_word(builder, [builder.bitcast(item, ir.IntType(16))
                                         for item in items[w:w + 2]])
                    for w in range(0, len(items), 2)]
        words_out = []
        for w in range(len(items) // per_word):
            word = None
            for k in range(per_word):
                part = builder.zext(builder.bitcast(items[w * per_word + k],
                                                    ir.IntType(8 * itemsize)), ir.IntType(32))
                if k:
                    part = builder.shl(part, ir.Constant(ir.IntType(32), 8 * itemsize * k))
                word = part if word is None else builder.or_(word, part)
            words_out.append(word)
        return words_out

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
                width = lanes * context.get_abi_sizeof(element)
                cast = builder.bitcast(address, words(vector, width).as_pointer())
                loaded = builder.load(cast, align=width)
                # NOTE: kernels never write their inputs (results are new arrays), so a load
                # may take the read-only path (ld.global.nc).
                loaded.set_metadata("invariant.load", builder.module.add_metadata([]))
                if loaded.type != vector:
                    values = narrow_from_words(
                        builder, [builder.extract_element(loaded, ir.Constant(ir.IntType(32), k))
                                  for k in range(4)], element, width // lanes, lanes)
                else:
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
            items = [context.cast(builder, item, kind, pointer.dtype)
                     for item, kind in zip(items, signature.args[2:])]
            width = lanes * context.get_abi_sizeof(element)
            kind = words(vector, width)
            packed = ir.Constant(kind, ir.Undefined)
            parts = narrow_to_words(builder, items, width // lanes) if kind != vector else items
            for lane, item in enumerate(parts):
                packed = builder.insert_element(packed, item, ir.Constant(ir.IntType(32), lane))
            offset = context.cast(builder, offset, signature.args[1], types.intp)
            address = builder.gep(base, [offset])
            builder.store(packed, builder.bitcast(address, kind.as_pointer()), align=width)
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

    @intrinsic
    def vstore8(typingctx, pointer, index, v0, v1, v2, v3, v4, v5, v6, v7):
        """Eight values (of a 1- or 2-byte type) to pointer[index:index + 8] in one store."""
        if storable(pointer, index):
            return types.void(pointer, index, v0, v1, v2, v3, v4, v5, v6, v7), store_codegen(8)

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

    def ptx(qualifier: str, body: str) -> str:
        """`body` with Q replaced by `qualifier`; a qualifier 'Q|POLICY' also makes an L2 cache
        policy (createpolicy.fractional.L2::POLICY) and passes it as the access's cache-policy
        operand (Q must then hold .L2::cache_hint)."""
        if "|" not in qualifier:
            return body.replace("Q", qualifier).replace("POLICY", "").replace(", ;", ";")
        qual, policy = qualifier.split("|")
        return ("{ .reg .b64 policy; createpolicy.fractional.L2::%s.b64 policy, 1.0; %s }"
                % (policy, body.replace("Q", qual).replace("POLICY", "policy")))

    def operands(count: int, first: int) -> str:
        names = ", ".join(f"${first + k}" for k in range(count))
        return names if count == 1 else "{" + names + "}"

    def operand(element, itemsize: int):
        """(PTX type, asm constraint, LLVM type) of one operand of a hinted access: the element
        itself where it is 4 or 8 bytes, else a 32-bit word of 2 or 4 packed elements."""
        if isinstance(element, ir.FloatType):
            return "f32", "f", element
        if isinstance(element, ir.DoubleType):
            return "f64", "d", element
        if itemsize in (4, 8):
            return f"b{8 * itemsize}", "r" if itemsize == 4 else "l", element
        return "b32", "r", ir.IntType(32)

    def hinted_text(context, element, lanes: int, qualifier: str, load: bool):
        """(PTX, constraints, operand LLVM type, operand count) of a hinted access."""
        itemsize = context.get_abi_sizeof(element)
        assert lanes * itemsize in (4, 8, 16), (lanes, itemsize)
        kind, constraint, llvm_type = operand(element, itemsize)
        count = lanes if itemsize >= 4 else lanes * itemsize // 4
        shape = "" if count == 1 else f".v{count}"
        if load:
            text = ptx(qualifier, f"ld.globalQ{shape}.{kind} {operands(count, 0)}, "
                                  f"[${count}], POLICY;")
            constraints = ",".join([f"={constraint}"] * count + ["l"])
        else:
            text = ptx(qualifier, f"st.globalQ{shape}.{kind} [$0], {operands(count, 1)}, POLICY;")
            constraints = ",".join(["l"] + [constraint] * count)
        return text, constraints, llvm_type, count

    def hinted_address(context, builder, signature, args):
        base, offset = args[0], args[1]
        offset = context.cast(builder, offset, signature.args[1], types.intp)
        return builder.ptrtoint(builder.gep(base, [offset]), ir.IntType(64))

    hinted: dict = {}

    def hinted_load(lanes: int, qualifier: str):
        """An intrinsic (pointer, index) -> `lanes` elements (one element where `lanes` is 1):
        one ld.global<qualifier> of 4, 8 or 16 bytes (elements of 1 or 2 bytes as 32-bit words).
        No side effects: the compiler may move or merge it, as it may any read of an input."""
        if ("load", lanes, qualifier) in hinted:
            return hinted[("load", lanes, qualifier)]

        @intrinsic
        def load(typingctx, pointer, index):
            if not storable(pointer, index):
                return None
            result = types.UniTuple(pointer.dtype, lanes) if lanes > 1 else pointer.dtype

            def codegen(context, builder, signature, args):
                element = context.get_value_type(pointer.dtype)
                text, constraints, llvm_type, count = hinted_text(context, element, lanes,
                                                                  qualifier, load=True)
                kind = ir.FunctionType(llvm_type if count == 1 else
                                       ir.LiteralStructType([llvm_type] * count), [ir.IntType(64)])
                out = builder.asm(kind, text, constraints,
                                  [hinted_address(context, builder, signature, args)], False)
                loaded = [out] if count == 1 else [builder.extract_value(out, k)
                                                    for k in range(count)]
                if count != lanes:
                    loaded = narrow_from_words(builder, loaded, element,
                                               context.get_abi_sizeof(element), lanes)
                return loaded[0] if lanes == 1 else context.make_tuple(builder, result, loaded)
            return result(pointer, index), codegen
        hinted[("load", lanes, qualifier)] = load
        return load

    def hinted_store(lanes: int, qualifier: str):
        """An intrinsic (pointer, index, v0, ...) storing `lanes` elements with one
        st.global<qualifier> of 4, 8 or 16 bytes."""
        if ("store", lanes, qualifier) in hinted:
            return hinted[("store", lanes, qualifier)]

        def codegen(context, builder, signature, args):
            pointer = signature.args[0]
            element = context.get_value_type(pointer.dtype)
            text, constraints, llvm_type, count = hinted_text(context, element, lanes, qualifier,
                                                              load=False)
            items = [context.cast(builder, item, kind, pointer.dtype)
                     for item, kind in zip(args[2:], signature.args[2:])]
            if count != lanes:
                items = narrow_to_words(builder, items, context.get_abi_sizeof(element))
            builder.asm(ir.FunctionType(ir.VoidType(), [ir.IntType(64)] + [llvm_type] * count),
                        text, constraints,
                        [hinted_address(context, builder, signature, args)] + items, True)
            return context.get_dummy_value()

        # (numba lowers no *args of an intrinsic: one signature per vector width)
        if lanes == 1:
            @intrinsic
            def store(typingctx, pointer, index, v0):
                if storable(pointer, index):
                    return types.void(pointer, index, v0), codegen
        elif lanes == 2:
            @intrinsic
            def store(typingctx, pointer, index, v0, v1):
                if storable(pointer, index):
                    return types.void(pointer, index, v0, v1), codegen
        elif lanes == 4:
            @intrinsic
            def store(typingctx, pointer, index, v0, v1, v2, v3):
                if storable(pointer, index):
                    return types.void(pointer, index, v0, v1, v2, v3), codegen
        else:
            @intrinsic
            def store(typingctx, pointer, index, v0, v1, v2, v3, v4, v5, v6, v7):
                if storable(pointer, index):
                    return types.void(pointer, index, v0, v1, v2, v3, v4, v5, v6, v7), codegen
        hinted[("store", lanes, qualifier)] = store
        return store

    def grid_control(instruction: str, doc: str):
        """An intrinsic () -> None: one PTX `griddepcontrol` instruction, which no memory access
        moves across (a memory clobber)."""
        @intrinsic
        def control(typingctx):
            def codegen(context, builder, signature, args):
                builder.asm(ir.FunctionType(ir.VoidType(), []), f"griddepcontrol.{instruction};",
                            "~{memory}", [], True)
                return context.get_dummy_value()
            return types.void(), codegen
        control.__doc__ = doc
        return control

    launch_dependents = grid_control("launch_dependents", """Let the stream's next kernel, if
        launched with programmatic stream serialization (cuda_host), start launching once every
        block of this one has run this (or exited). Memory is no concern of it: see below.""")
    wait_for_prerequisite = grid_control("wait", """Wait until the kernel before this one in
        the stream has finished and its writes are visible: a kernel launched with programmatic
        stream serialization must run it before it touches global memory. A no-op otherwise.""")

    return {"address": address, "sload4": sload4, "sstore4": sstore4,
            "hinted_load": hinted_load, "hinted_store": hinted_store,
            "launch_dependents": launch_dependents, "wait_for_prerequisite": wait_for_prerequisite,
            "vload2": make_load(2), "vload4": make_load(4), "vload8": make_load(8),
            "vstore2": vstore2, "vstore4": vstore4, "vstore8": vstore8}


LANES = (2, 4, 8)
if config.ENABLE_CUDASIM:
    from .vector_simulator import functions as _simulator_functions
    globals().update(_simulator_functions(LANES))
else:
    globals().update(_intrinsics())
