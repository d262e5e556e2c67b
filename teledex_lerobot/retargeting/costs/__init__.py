"""Cost terms of the retargeting objective, one per file, each a weighted sum of squares with an analytic Jacobian
(every residual row is a weighted difference of two state entries minus a target, see `base`).

Every term is `value(state) = ‖r(state)‖²` with `gradient = 2 Jᵀ r`, where r is the term's residual and J = ∂r/∂q
(see `base.ResidualTerm`). The solver stacks the residuals of all terms and takes Gauss-Newton steps.

- `KeypointPositionCost`: robot keypoints onto target points (TeleDex alignment).
- `KeypointVectorCost`: vectors between robot keypoints onto target vectors (TeleDex thumb-finger coupling;
  DexPilot task-space vectors).
- `JointDeviationCost`: joints toward a reference (TeleDex temporal smoothness with the previous solution, and its
posture prior;
  DexPilot's γ‖q‖² with the open hand).
"""

from .base import KinematicState, ResidualTerm, StateIndex
from .joint_deviation import JointDeviationCost
from .keypoint_position import KeypointPositionCost
from .keypoint_vector import KeypointVectorCost

__all__ = ["JointDeviationCost", "KeypointPositionCost", "KeypointVectorCost", "KinematicState", "ResidualTerm",
           "StateIndex"]
