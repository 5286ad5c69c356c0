"""What publishing.md shows literally (``--repo-id ORG/splice --code-url URL``) is refused
for what is wrong with it, in one line each: the placeholder organisation as the repo id
(it was "still names the placeholder ...: edit the file"), and ``URL``, which is no code
URL (it was accepted) (issue 49 section 5)."""

from __future__ import annotations

from tests.support.build_helpers import run_splice
from tests.support.one_line_errors import assert_one_line


def test_publish_the_docs_placeholder_repo_id_says_give_yours(demo_build, tmp_path):
    argv = ["publish", demo_build, "--repo-id", "ORG/splice", "--code-url", "https://x.org/c"]
    done = run_splice(*argv, "--dry-run", cwd=tmp_path)
    assert_one_line(done, "--repo-id ORG/splice", "placeholder", "your own")
    assert "edit the file" not in done.stderr


def test_publish_metric_placeholder_ids_are_refused(tmp_path):
    done = run_splice("publish-metric", "--repo-id", "ORG/splice_metric", "--dry-run")
    assert_one_line(done, "--repo-id ORG/splice_metric", "placeholder")
    argv = ["publish-metric", "--repo-id", "me/splice_metric", "--dataset-repo-id", "ORG/splice"]
    assert_one_line(run_splice(*argv, "--dry-run"), "--dataset-repo-id ORG/splice")


def test_a_code_url_is_an_http_url(tmp_path):
    for url in ("URL", "ftp://x.org/c", "https://", "javascript:alert(1)"):
        argv = ["publish-metric", "--repo-id", "me/splice_metric", "--code-url", url]
        assert_one_line(run_splice(*argv, "--dry-run"), f"--code-url {url}", "http(s)")
