"""The topics' cards (``compare/topics/cards.py``): what ``list`` and ``describe``
show, kept in the cache folder and read back without importing a topic.

Deterministic (files and text): no false-alarm rate to state. Power: a card
file edited behind the cache's back is what a read gives (the cache is read),
a changed file of the package gives another key (an edit is never served old
cards), and a damaged file is built again rather than shown.
"""

from __future__ import annotations

import json
import os

import pytest

from compare.topics import all_topics, cards
from compare.topics.cards import TopicCard, files_key


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "cards"


def _builtin():
    return [TopicCard.of(t) for t in all_topics() if t.name.replace("-", "_") in cards.CATALOGUE]


def test_kept_cards_are_the_topics_cards(cache):
    built = cards._builtin_cards()
    (kept,) = cache.glob("*.json")
    assert kept.stem == cards.sources_key()
    assert list(built) == _builtin() == list(cards._builtin_cards())
    assert [c.name for c in built] == [e.replace("_", "-") for e in cards.CATALOGUE]
    assert all(c.parameters and c.builtin for c in built)
    # the read is from the file: an edit behind the cache's back is what comes back
    doc = json.loads(kept.read_text())
    doc[0]["title"] = "edited"
    kept.write_text(json.dumps(doc))
    assert cards._builtin_cards()[0].title == "edited"


def test_a_damaged_file_is_built_again_and_older_keys_removed(cache):
    cache.mkdir(parents=True)
    (cache / ("0" * 32 + ".json")).write_text("[]")  # an older key's cards
    path = cache / f"{cards.sources_key()}.json"
    for damage in ("{", "[{}]", '[{"name": 1}]', "null"):
        path.write_text(damage)
        assert list(cards._builtin_cards()) == _builtin(), damage
        assert [c["name"] for c in json.loads(path.read_text())][:1] == ["beta-binomial"]
    assert [p.name for p in cache.glob("*.json")] == [path.name]


def test_an_unwritable_cache_is_no_error(cache):
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the folder would be")
    assert list(cards._builtin_cards()) == _builtin()


def test_the_key_follows_every_file(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "sub" / "data.csv").write_text("y\n1\n")
    roots = [("pkg", str(root))]
    key = files_key(roots)
    assert files_key(roots) == key
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"\0")
    assert files_key(roots) == key  # bytecode is not a source
    st = os.stat(root / "a.py")
    os.utime(root / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert files_key(roots) != key  # touched
    key = files_key(roots)
    (root / "sub" / "data.csv").write_text("y\n2\n")
    os.utime(root / "sub" / "data.csv", ns=(st.st_atime_ns, st.st_mtime_ns))
    assert files_key(roots) != key  # another data file, whatever its time
    key = files_key(roots)
    (root / "b.py").write_text("")
    assert files_key(roots) != key  # a new module
    assert files_key([("other", str(root))]) != files_key(roots)
    key = files_key(roots)
    (root / "gone").symlink_to(root / "nowhere")  # a broken link is no file, and no error
    assert files_key(roots) == key


def test_cards_come_from_the_topics_when_user_topics_may_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", "off")
    assert cards._from_topics()
    monkeypatch.setenv("BAYES_COMPARE_CACHE_DIR", str(tmp_path))
    assert cards._from_topics()  # this process has loaded topics (the registry is not empty)
    monkeypatch.setattr(cards, "REGISTRY", {})
    assert not cards._from_topics()
    monkeypatch.setenv("BAYES_COMPARE_TOPIC_FILES", str(tmp_path / "mine.py"))
    assert cards._from_topics()
