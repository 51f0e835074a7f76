"""Fusion: partition a simplified graph into XLA-style groups, each one kernel."""
from .cost import DEFAULT, CostModel
from .group import Group
from .partition import partition
from .program import Decision, FusedProgram

__all__ = ["partition", "CostModel", "DEFAULT", "Group", "FusedProgram", "Decision"]
