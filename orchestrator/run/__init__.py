"""A research run: missions, agent definitions, dispatch through an executor, iterations, costs, the run's outputs.
"""
