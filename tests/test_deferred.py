"""cli/deferred.py: ``process`` defers rdflib's SPARQL package and html5rdf; a later use still works.

Each case runs in a fresh interpreter: the deferral changes how a process imports, and this
test process has rdflib and pyshacl imported already.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

_INSTALL = "from orchestrator.cli import deferred\ndeferred.install()\n"

_SHAPES = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <urn:ex:> .
ex:NoSelfLink a sh:NodeShape ; sh:targetClass ex:Thing ;
    sh:sparql [ sh:message "links to itself" ;
                sh:select "SELECT $this WHERE { $this <urn:ex:link> $this . }" ] .
ex:Named a sh:NodeShape ; sh:targetClass ex:Thing ;
    sh:property [ sh:path ex:name ; sh:minCount 1 ] .
"""

_DATA = """
@prefix ex: <urn:ex:> .
ex:a a ex:Thing ; ex:name "a" ; ex:link ex:a .
ex:b a ex:Thing ; ex:link ex:a .
ex:c a ex:Thing ; ex:name "c" .
"""


def run(code: str, *, deferred: bool = True) -> list[str]:
    source = (_INSTALL if deferred else "") + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_pyshacl_imports_without_the_sparql_grammar_and_a_query_then_works() -> None:
    lines = run("""
        import sys
        import pyshacl, rdflib
        print('parser' in dir(sys.modules['rdflib.plugins.sparql']), 'rdflib.plugins.sparql.parser' in sys.modules,
              'html5rdf.html5parser' in sys.modules)
        g = rdflib.Graph()
        for n in range(5):
            g.add((rdflib.URIRef(f'urn:s{n}'), rdflib.URIRef('urn:p'), rdflib.Literal(n)))
        print(sorted(str(r.s) for r in g.query('SELECT ?s WHERE { ?s <urn:p> ?o FILTER(?o > 2) }')))
        import rdflib.plugins.sparql as package, rdflib.plugins.sparql.processor as processor
        print(package.prepareQuery is processor.prepareQuery,
              package.parser is sys.modules['rdflib.plugins.sparql.parser'])
    """)
    assert lines == ["False False False", "['urn:s3', 'urn:s4']", "True True"]


def test_a_submodule_imported_first_runs_its_package_first_and_once() -> None:
    """rdflib's plugin registry imports ``sparql.processor`` itself: it needs the package's code first."""
    lines = run("""
        import sys
        import pyshacl
        from rdflib.plugins.sparql.processor import prepareQuery
        import rdflib.plugins.sparql as package
        import rdflib.plugins.sparql.results.jsonresults as jsonresults
        print(package.prepareQuery is prepareQuery, package.processor is sys.modules['rdflib.plugins.sparql.processor'],
              isinstance(package.CUSTOM_EVALS, dict), jsonresults.__name__)
        print(prepareQuery('SELECT ?s WHERE { ?s ?p ?o }').algebra.name)
    """)
    assert lines == ["True True True rdflib.plugins.sparql.results.jsonresults", "SelectQuery"]


def test_a_sparql_shacl_constraint_gives_the_same_verdict_deferred_or_not() -> None:
    code = f"""
        import pyshacl, rdflib
        shapes = rdflib.Graph().parse(data={_SHAPES!r}, format='turtle')
        data = rdflib.Graph().parse(data={_DATA!r}, format='turtle')
        conforms, report, _ = pyshacl.validate(data, shacl_graph=shapes)
        sh = rdflib.Namespace('http://www.w3.org/ns/shacl#')
        print(conforms, sorted(str(report.value(r, sh.focusNode)) for r in report.subjects(sh.resultSeverity, None)))
    """
    deferred = run(code)
    assert deferred == run(code, deferred=False)
    assert deferred == ["False ['urn:ex:a', 'urn:ex:b']"]  # a links to itself (SPARQL), b has no name


def test_an_html_literal_is_still_parsed() -> None:
    lines = run("""
        import sys, rdflib
        from rdflib.namespace import RDF
        print('html5rdf.html5parser' in sys.modules)
        value = rdflib.Literal('<b>bold</b> text', datatype=RDF.HTML).value
        print(type(value).__name__, value.firstChild.tagName)
    """)
    assert lines == ["False", "DocumentFragment b"]


_FINDER = """import sys
from orchestrator.cli import launch
sys.argv = ["cconductor", *sys.argv[1:]]
try:
    launch.run()
except SystemExit:
    pass
print(any(type(finder).__name__ == "DeferringFinder" for finder in sys.meta_path))
"""


def test_only_the_one_shot_process_of_the_executable_defers(tmp_path: Path) -> None:
    """Not a long-running command (its threads could race a first import), nor the CLI as a library."""
    from orchestrator.cli import main
    from orchestrator.session.record import create_session

    paths = create_session(tmp_path / "sessions", "q", "m")

    def finder_after(*argv: str) -> str:
        out = subprocess.run([sys.executable, "-c", _FINDER, *argv], capture_output=True, text=True, timeout=120)
        return out.stdout.strip().splitlines()[-1]

    assert finder_after("process", str(paths.root)) == "True"
    assert finder_after("status", str(paths.root)) == "False"
    assert finder_after("validate", str(paths.root)) == "False"
    assert CliRunner().invoke(main, ["process", str(paths.root)]).exit_code == 0
    assert not any(type(finder).__name__ == "DeferringFinder" for finder in sys.meta_path)


def test_a_program_importing_the_cli_keeps_its_imports_as_they_are() -> None:
    lines = run("""
        import sys
        from orchestrator.cli import main
        import pyshacl
        print('rdflib.plugins.sparql.parser' in sys.modules, type(sys.modules['rdflib.plugins.sparql']).__name__)
    """, deferred=False)
    assert lines == ["True module"]
