"""The facts about a GPU that generated kernels are sized by: SM count, threads and registers an
SM holds, shared memory a block, compute capability. Read from the device where one runs the
call; otherwise (lowering for inspection, the simulator, PTX in CI) a Hopper H100/H200's."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    sms: int = 132                    # streaming multiprocessors
    threads_per_sm: int = 2048        # resident threads an SM
    registers_per_sm: int = 65536     # 32-bit registers an SM
    shared_per_block: int = 48 * 1024  # bytes of static shared memory a block may declare
    cc: tuple = (9, 0)                # compute capability


HOPPER = Device()


def from_attributes(attributes: dict) -> Device:
    """A Device from the driver's attributes (runtime/driver.ensure_context's dictionary)."""
    return Device(sms=attributes["sms"], cc=tuple(attributes["cc"]),
                  threads_per_sm=attributes.get("threads_per_sm", HOPPER.threads_per_sm),
                  registers_per_sm=attributes.get("registers_per_sm", HOPPER.registers_per_sm),
                  shared_per_block=attributes.get("shared_per_block", HOPPER.shared_per_block))
