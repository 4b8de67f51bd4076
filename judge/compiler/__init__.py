"""Compiler facts both sandboxed processes need: learner lines, log artifacts, graph breaks, guards. Imports
nothing of the checks."""
