# The preloaded library under mpirun.
