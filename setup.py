"""The package list, which setup.cfg cannot give: kafkalite's packages as found, and bench/'s under
the project's own name, kafkalite_bench (setup.cfg maps the folder: package_dir). Everything else
is in setup.cfg."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["kafkalite", "kafkalite.*"]),
                "kafkalite_bench", *(f"kafkalite_bench.{p}" for p in find_packages("bench"))])
