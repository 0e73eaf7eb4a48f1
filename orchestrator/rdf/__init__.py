"""The graph as RDF: conversion (one named graph per agent), SHACL validation, TriG/Turtle/JSON-LD writing.
"""
