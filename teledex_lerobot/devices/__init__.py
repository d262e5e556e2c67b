"""Joint devices (fake, simulated; real drivers arrive with the hardware backends) and the simulated camera renderer."""
