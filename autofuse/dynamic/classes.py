"""The shape-class side of a jitted function's cache: class programs (keyed by class) and their
instances at the sizes calls brought (keyed by the call's own signature)."""
from __future__ import annotations

import dataclasses
import time

from ..debug import STATE as _DEBUG, compiled
from .builder import Builder, Shapes
from .forms import evaluate
from .policy import Policy, class_key, shape_of

MAX_INSTANCES = 1024        # instances kept per function (a new size's costs ~1 ms to make again)
MAX_FAST = 4096             # jit's fast-path keys kept (shapes that vary add one a size)


class Classes:
    """What `autofuse.jit` keeps for shapes that vary (one per JitFunction)."""

    def __init__(self, mode):
        self.policy = Policy(mode)
        self.instances: dict = {}
        self.declined: dict = {}            # (backend, key) -> (places, why the class did not
        #                                     run the call's sizes), until its entry is built
        self.made = 0

    def find(self, jit, cache: dict, key, args, kwargs, leaves, statics, structure, backend):
        """(entry, built): the class program's instance for this call (built: whether its class
        program was compiled now), or (None, False) where the call takes a static entry."""
        from ..backends import dynamic_backend
        target = dynamic_backend(backend)
        if target is None:
            return None, False
        found = self.instances.get((backend, key))
        if found is not None:
            return found, False
        places = self.policy.places(structure, leaves, statics)
        if not places:
            return None, False
        # NOTE: sizes 0 and 1 take markers here as other sizes do: a call of such a size builds
        # the class too (at stand-in sizes, as any call does), then takes it only where the class
        # runs its sizes (_runs); otherwise it compiles on its own.
        class_of, symbols = class_key(key, leaves, places, joined=True)
        template = cache.get((backend, class_of))
        built = False
        if template is None:
            template = self._build(jit, cache, key, args, kwargs, leaves, statics, structure,
                                   backend, symbols)
            built = template is not None
        if template is None or not self._runs(template, leaves):
            if built and _DEBUG.active:
                compiled(template)
            return None, built
        instance = self._instance(target, template, leaves, backend, key)
        if built and _DEBUG.active:
            compiled(instance if instance is not None else template)   # (the call's own sizes)
        return instance, built

    @staticmethod
    def _runs(template, leaves) -> bool:
        """Whether the class program runs this call's sizes (0 and 1 only where it joins them,
        none under its least size past them)."""
        for symbol, where in template.dynamic.places.items():
            size = shape_of(leaves[where[0][0]])[where[0][1]]
            least = template.dynamic.least.get(symbol, (2,))[0]
            if size < least and size not in template.dynamic.joins.get(symbol, ()):
                return False
        return True

    def _build(self, jit, cache, key, args, kwargs, leaves, statics, structure, backend, symbols):
        names = jit._binder.leaf_names(args, kwargs)
        place_names = {s: [f"{names[leaf]}.shape[{dim}]" for leaf, dim in where]
                       for s, where in symbols.items()}
        start = time.perf_counter()
        # NOTE: past policy.SPECIALIZED sizes a dimension kept static as only faster is built
        # as the user's dynamic=True would build it
        insisted = any(self.policy.insists(structure, place)
                       for where in symbols.values() for place in where)
        builder = Builder(jit.fn, structure, leaves, statics, backend, jit._binder.name,
                          jit.options, symbols, place_names,
                          asked=self.policy.mode is True or insisted)
        template = builder.build()
        dropped = {place: builder.static[f"{names[place[0]]}.shape[{place[1]}]"]
                   for place in builder.dropped}
        self.policy.keep_static(structure, dropped, builder.slower)
        if template is None:
            return None
        template.build_seconds = time.perf_counter() - start
        kept = [place for where in template.dynamic.places.values() for place in where]
        class_of, _ = class_key(key, leaves, kept, joined=True)
        cache[(backend, class_of)] = template
        return template

    def _instance(self, target, template, leaves, backend, key):
        sizes = template.dynamic.sizes(leaves)
        made = target.instantiate(template, sizes)
        if isinstance(made, str):      # (the call compiles on its own: made says why)
            names = ", ".join(name for s in template.dynamic.places
                              for name in template.dynamic.names[s])
            self.declined[(backend, key)] = (names, made)
            return None
        graph, program, records = made
        instance = dataclasses.replace(template, graph=graph, program=program, kernels=records)
        if template.traced.checks:
            # NOTE: a check's message names the call's shapes (trace/checks.py): its own sizes
            messages = evaluate(template.dynamic.messages, sizes)
            instance.traced = dataclasses.replace(template.traced, checks=tuple(
                (index, error, message)
                for (index, error, _), message in zip(template.traced.checks, messages)))
        instance.sizes = sizes             # (the debug output's signature: lowered.py)
        if len(self.instances) >= MAX_INSTANCES:
            self.instances.clear()
        self.instances[(backend, key)] = instance
        self.made += 1
        return instance

    def reasons(self, structure, args, kwargs, jit, declined=None) -> Shapes | None:
        """What a static entry of this structure says of its dimensions kept static (`declined`:
        the key of a call whose class did not run its sizes, find's)."""
        kept = self.policy.static.get(structure, {})
        names = jit._binder.leaf_names(args, kwargs)
        static = {f"{names[leaf]}.shape[{dim}]": why for (leaf, dim), why in kept.items()
                  if leaf < len(names)}
        if declined in self.declined:
            places, why = self.declined.pop(declined)
            static[places] = f"this size compiles on its own: {why}"
        return Shapes({}, {}, {}, static=static) if static else None

    def clear(self) -> None:
        self.instances.clear()
        self.declined.clear()
