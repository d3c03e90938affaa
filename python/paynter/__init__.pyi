# The typed interface of the Python module paynter (docs/python.md); checked
# against the module by mypy's stubtest and used by mypy on the tests'
# typed example (python/tests/test_typing.py).
import os
from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

import numpy
import numpy.typing as npt

__version__: str
RUN_OPTIONS: Tuple[str, ...]

_Path = Union[str, "os.PathLike[str]"]
_Number = Union[int, float, numpy.floating[Any], numpy.integer[Any]]
_Params = Union[Mapping[str, _Number], Iterable[Tuple[str, _Number]]]
_Form = Literal["state", "lagrange1", "lagrange2", "hamilton", "boltzmann-hamel"]
_Constraints = Literal["auto", "lagrange-multipliers", "minimal-coordinates", "parasitic", "zcp"]
_Method = Literal["rk4", "dopri5", "bdf"]
_Backend = Literal["auto", "tiered", "native", "tape"]
_BlockSolve = Literal["auto", "dense", "sparse"]
_Procedure = Literal["SCAP", "HaCAP", "LaCAP", "LCAP", "RCAP", "BHCAP"]
_Range = Union[Tuple[_Number, _Number, int], str]
_FloatArray = npt.NDArray[numpy.float64]

class Error(Exception):
    report: str

class ModelError(Error):
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    element: Optional[str]
    bond: Optional[str]
    message: str
    expected: Optional[str]
    got: Optional[str]
    hint: Optional[str]
    index: int

class Description(TypedDict):
    parameters: Dict[str, float]
    states: List[str]
    outputs: List[str]

class _BodeResponse(TypedDict):
    omega: _FloatArray
    magnitude_db: _FloatArray
    phase_deg: _FloatArray
    input: str
    output: str

class Bode(_BodeResponse, total=False):
    # A loop gain's (loop_at): its crossovers and margins.
    gain_crossovers: List[Tuple[float, float]]
    phase_crossovers: List[Tuple[float, float]]
    phase_margin: Optional[Tuple[float, float]]
    gain_margin: Optional[Tuple[float, float]]
    margin_range: Tuple[float, float]

class FmuInfo(TypedDict):
    path: str
    fmi_version: int
    model_identifier: str
    library_path: str
    guid: str
    form: str
    states: int
    inputs: int
    outputs: int
    parameters: int
    tunable: int
    calculated: int
    compile_seconds: float
    library_bytes: int
    fmu_bytes: int

class Result:
    data: _FloatArray
    columns: List[str]
    stats: Dict[str, Any]
    report: str
    def __init__(self, raw: Mapping[str, Any]) -> None: ...
    @property
    def t(self) -> _FloatArray: ...
    def __getitem__(self, name: str) -> _FloatArray: ...
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...
    def keys(self) -> List[str]: ...
    def to_pandas(self) -> Any: ...
    def plot(self, *names: str, x: str = ..., path: Optional[_Path] = ..., title: Optional[str] = ...) -> Any: ...
    def _repr_html_(self) -> str: ...

class Comparison:
    methods: List[Dict[str, Any]]
    reference: str
    outputs: List[str]
    markdown: str
    csv: str
    def __init__(self, raw: Mapping[str, Any]) -> None: ...
    def __getitem__(self, method: str) -> Dict[str, Any]: ...
    def _repr_markdown_(self) -> str: ...

class Linearization:
    A: _FloatArray
    B: _FloatArray
    C: _FloatArray
    D: _FloatArray
    V: _FloatArray
    t: float
    how: str
    text: str
    states: List[str]
    inputs: List[str]
    outputs: List[str]
    x: List[float]
    dx: List[float]
    y: List[float]
    all_states: List[str]
    dependent: List[str]
    all_x: List[float]
    modes: List[Tuple[complex, float, float]]
    loop: Optional[Dict[str, Any]]
    def __init__(self, raw: Mapping[str, Any], model: Model, point: Tuple[Any, ...]) -> None: ...
    @property
    def eigenvalues(self) -> List[complex]: ...
    def bode(self, input: Optional[str] = ..., output: Optional[str] = ..., w_from: _Number = ..., w_to: _Number = ...,
             points: int = ...) -> Bode: ...

class Sweep:
    model_name: str
    columns: List[str]
    names: List[str]
    values: _FloatArray
    data: _FloatArray
    summary: numpy.ndarray[Any, numpy.dtype[numpy.void]]
    ok: npt.NDArray[numpy.bool_]
    errors: List[str]
    failed: int
    own_builds: int
    compiled_once: bool
    threads: int
    shape: Tuple[int, ...]
    coords: Dict[str, _FloatArray]
    def __init__(self, raw: Mapping[str, Any], model_name: str = ...) -> None: ...
    def __len__(self) -> int: ...
    def run(self, k: int) -> Result: ...
    def to_pandas(self, rows: bool = ...) -> Any: ...
    def to_xarray(self) -> Any: ...
    def _repr_html_(self) -> str: ...

class Model:
    path: str
    name: str
    def __init__(self, path: str, display: str = ..., build: bool = ...) -> None: ...
    def check(self) -> str: ...
    def causality(self, procedure: _Procedure = ..., constraints: _Constraints = ...) -> str: ...
    def equations(self, form: _Form = ..., latex: bool = ..., explain: bool = ..., constraints: _Constraints = ...) -> str: ...
    def simulate(self, t_end: Optional[_Number] = ..., *, t0: Optional[_Number] = ..., method: Optional[_Method] = ...,
                 rtol: Optional[_Number] = ..., atol: Optional[_Number] = ..., dt_out: Optional[_Number] = ...,
                 step: Optional[_Number] = ..., max_steps: Optional[int] = ..., params: Optional[_Params] = ...,
                 form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ..., backend: _Backend = ...,
                 block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
                 assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
                 drift_tolerance: Optional[_Number] = ...) -> Result: ...
    def simulate_many(self, param_sets: Iterable[_Params], t_end: Optional[_Number] = ..., threads: Optional[int] = ...,
                      errors: Literal["raise", "return"] = ..., *, t0: Optional[_Number] = ...,
                      method: Optional[_Method] = ..., rtol: Optional[_Number] = ..., atol: Optional[_Number] = ...,
                      dt_out: Optional[_Number] = ..., step: Optional[_Number] = ..., max_steps: Optional[int] = ...,
                      params: Optional[_Params] = ..., form: Optional[_Form] = ...,
                      constraints: Optional[_Constraints] = ..., backend: _Backend = ..., block_solve: _BlockSolve = ...,
                      parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ..., assemble: bool = ...,
                      stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
                      drift_tolerance: Optional[_Number] = ...) -> List[Union[Result, ModelError]]: ...
    def sweep(self, ranges: Optional[Mapping[str, _Range]] = ..., *, log: Iterable[str] = ...,
              table: Union[_Path, Mapping[str, Sequence[_Number]], Any, None] = ..., t_end: Optional[_Number] = ...,
              threads: Optional[int] = ..., t0: Optional[_Number] = ..., method: Optional[_Method] = ...,
              rtol: Optional[_Number] = ..., atol: Optional[_Number] = ..., dt_out: Optional[_Number] = ...,
              step: Optional[_Number] = ..., max_steps: Optional[int] = ..., params: Optional[_Params] = ...,
              form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ..., backend: _Backend = ...,
              block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
              assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
              drift_tolerance: Optional[_Number] = ...) -> Sweep: ...
    def describe(self, *,
               t0: Optional[_Number] = ..., method: Optional[_Method] = ...,
               rtol: Optional[_Number] = ..., atol: Optional[_Number] = ..., dt_out: Optional[_Number] = ...,
               step: Optional[_Number] = ..., max_steps: Optional[int] = ..., params: Optional[_Params] = ...,
               form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ..., backend: _Backend = ...,
               block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
               assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
               drift_tolerance: Optional[_Number] = ...) -> Description: ...
    @property
    def parameters(self) -> Dict[str, float]: ...
    @property
    def states(self) -> List[str]: ...
    @property
    def outputs(self) -> List[str]: ...
    def draw(self, path: Optional[_Path] = ..., procedure: _Procedure = ..., constraints: _Constraints = ...,
             expand: bool = ..., highlight: int = ...) -> Optional[str]: ...
    def _repr_svg_(self) -> Optional[str]: ...
    def report(self, path: _Path, t_end: Optional[_Number] = ..., procedure: _Procedure = ..., *,
               t0: Optional[_Number] = ..., method: Optional[_Method] = ...,
               rtol: Optional[_Number] = ..., atol: Optional[_Number] = ..., dt_out: Optional[_Number] = ...,
               step: Optional[_Number] = ..., max_steps: Optional[int] = ..., params: Optional[_Params] = ...,
               form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ..., backend: _Backend = ...,
               block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
               assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
               drift_tolerance: Optional[_Number] = ...) -> None: ...
    def fmu(self, path: _Path, kind: Literal["me", "cs", "both"] = ..., form: Optional[_Form] = ...,
            constraints: Literal["auto", "parasitic"] = ..., params: Optional[_Params] = ...,
            method: Literal["dopri5", "rk4"] = ..., rtol: _Number = ..., atol: _Number = ..., step: _Number = ...,
            parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
            fmi_version: Literal[2, 3] = ...) -> FmuInfo: ...
    def expand(self, after: Optional[str] = ...) -> str: ...
    def compare(self, t_end: Optional[_Number] = ..., *,
               t0: Optional[_Number] = ..., method: Optional[_Method] = ...,
               rtol: Optional[_Number] = ..., atol: Optional[_Number] = ..., dt_out: Optional[_Number] = ...,
               step: Optional[_Number] = ..., max_steps: Optional[int] = ..., params: Optional[_Params] = ...,
               form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ..., backend: _Backend = ...,
               block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ..., parasitic_damping: _Number = ...,
               assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ..., stage_cache: bool = ...,
               drift_tolerance: Optional[_Number] = ...) -> Comparison: ...
    def linearize(self, at: Optional[_Number] = ..., steady: bool = ..., states: Optional[_Params] = ...,
                  params: Optional[_Params] = ..., loop_at: Optional[str] = ...) -> Linearization: ...
    def bode(self, input: Optional[str] = ..., output: Optional[str] = ..., w_from: _Number = ...,
             w_to: _Number = ..., points: int = ..., at: Optional[_Number] = ..., steady: bool = ...,
             states: Optional[_Params] = ..., params: Optional[_Params] = ..., loop_at: Optional[str] = ...) -> Bode: ...

def to_yaml(model: Mapping[str, Any]) -> str: ...
def load(path: _Path) -> Model: ...
def loads(text: str) -> Model: ...
def from_dict(model: Mapping[str, Any]) -> Model: ...
def simulate(path: _Path, t_end: Optional[_Number] = ..., *, t0: Optional[_Number] = ...,
             method: Optional[_Method] = ..., rtol: Optional[_Number] = ..., atol: Optional[_Number] = ...,
             dt_out: Optional[_Number] = ..., step: Optional[_Number] = ..., max_steps: Optional[int] = ...,
             params: Optional[_Params] = ..., form: Optional[_Form] = ..., constraints: Optional[_Constraints] = ...,
             backend: _Backend = ..., block_solve: _BlockSolve = ..., parasitic_stiffness: _Number = ...,
             parasitic_damping: _Number = ..., assemble: bool = ..., stabilize: bool = ..., energy: bool = ..., project_energy: Optional[bool] = ...,
             stage_cache: bool = ..., drift_tolerance: Optional[_Number] = ...) -> Result: ...
