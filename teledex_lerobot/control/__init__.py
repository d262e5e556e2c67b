"""Control: safety limits, operator-to-joint mappings, Cartesian relative arm control."""
