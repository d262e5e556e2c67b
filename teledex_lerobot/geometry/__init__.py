"""Neutral geometry every layer may use: rotations, sides, camera intrinsics. Imports nothing else of ours."""
