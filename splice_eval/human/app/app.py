"""The annotation page (Gradio): one folder's shuffled parts side by side, a position per
part, "unknown", and the annotator's progress; every submit is saved at once.

The page is built from the package alone (``package.read_package``) and an
``AnswerStore``; it never sees the answer key, so no response can hold a true position.
Files are served only from the clip folders (``allowed_paths``), the key is blocked as
well, and the event handlers are hidden from Gradio's API page. With passwords the
logged-in user is the annotator: every handler acts for ``request.username`` and refuses
a page state (a session) that is someone else's, and, beneath the handlers, every
session, event and file is bound to the user who owns it (``guard``).

Under load and faults (many tabs, a restart):
- Submits are saved and acknowledged one at a time (``SAVE_QUEUE``, a Gradio concurrency
  group of one): an event's completion is sent before the next one starts, so the order
  in which the acknowledgements leave is the order of the saves, and the answer
  acknowledged last is the one on disk. Only submits wait on each other, and a submit is
  short: the clips are the export's own H.264 MP4 files, handed out as they are
  (``exported_clip``) instead of probed with ffprobe on every event (a process per clip
  per event, 0.3 s each on a loaded machine: 30 tabs waited minutes).
- The folder on screen travels with every event (a hidden field), and so does the
  annotator (the login, or the name chosen): a server restarted under an open page has
  lost the page's state, and serves its next submit from what the page shows
  (``Session.resume``), with the login kept across the restart (``logins``).
"""

import functools
import hmac
import os
from abc import ABCMeta
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .form import FormError, cell_from_form, form_from_cell
from .guard import OwnSessionsOnly
from .layout import KEY_NAME
from .logins import Logins
from .package import Package, Task
from .store import AnswerStore

GRADIO_VERSION = "6.31.0"  # setup.cfg's [annotate] pin and the Space's sdk_version
TITLE = "SPLICE: put the parts in order"
HELP = """\
Watch every part, then give each one its **position**: 1 for what happened first.
Tick **unknown** only when the order cannot be told (the same instruction shown twice,
one continuous action over several parts, or unrelated actions with nothing linking them);
you may still give your best guess. Each submit is saved; you can close the tab and come
back. Do not look anything up, and do not discuss folders with your team mate."""
SAVE_QUEUE = "save"  # the Gradio concurrency group of submits: one at a time
MODALITY_WORDS = {
    "video": "video only",
    "video_text": "video + text: each part's step description is written in the picture",
}


@dataclass(frozen=True)
class View:
    """What the page shows after an event: one task of one annotator, or the start form."""

    annotator: str | None
    index: int  # position of the task in the annotator's list
    message: str


class Session:
    """The page's logic, free of widgets, so it can be tested and reused by the Space."""

    def __init__(self, package: Package, store: AnswerStore):
        self.package = package
        self.store = store

    def resume(self, view: View, annotator: str | None, folder: float | None) -> View:
        """The page's state, or, when the server has none (it restarted under an open page),
        the page the client still shows: ``annotator`` (the login, or the name chosen) on
        ``folder``. A folder that is not one of that annotator's gives no page, so nothing
        is ever saved under a folder the page did not show."""
        if view.annotator is not None or annotator not in self.package.tasks:
            return view
        folders = [t.folder for t in self.tasks(annotator)]
        if isinstance(folder, bool) or not isinstance(folder, int | float):
            return view
        if folder not in folders:  # 3.0 is folder 3; NaN, inf, 3.5 are none
            return view
        return View(annotator, folders.index(folder), "")

    def start(self, annotator: str | None) -> View:
        if annotator not in self.package.tasks:
            return View(None, 0, "Choose your name first.")
        return View(annotator, self._next_open(annotator, -1), "")

    def submit(self, view: View, positions: list[float | None], unk: bool) -> View:
        if view.annotator is None:
            return View(None, 0, "Choose your name first.")
        task = self.tasks(view.annotator)[view.index]
        try:
            cell = cell_from_form(positions[: len(task.clips)], unk)
        except FormError as exc:
            return View(view.annotator, view.index, f"Not saved: {exc}")
        self.store.save(view.annotator, task.folder, cell)
        index = self._next_open(view.annotator, view.index)
        return View(view.annotator, index, f"Saved folder {task.folder}.")

    @staticmethod
    def belongs(view: View, user: str | None) -> bool:
        """Whether a page state may be acted on by the logged-in ``user`` (None: no login,
        anyone may be anyone). A state is a session's, and a session is named by a hash the
        client sends: with passwords, only the user's own page counts."""
        return user is None or view.annotator in (None, user)

    def move(self, view: View, step: int) -> View:
        if view.annotator is None:
            return view
        last = len(self.tasks(view.annotator)) - 1
        return View(view.annotator, min(max(view.index + step, 0), last), "")

    def tasks(self, annotator: str) -> tuple[Task, ...]:
        return self.package.tasks[annotator]

    def progress(self, annotator: str) -> tuple[int, int]:
        done = self.store.load(annotator)
        tasks = self.tasks(annotator)
        return sum(t.folder in done for t in tasks), len(tasks)

    def _next_open(self, annotator: str, after: int) -> int:
        """The first unanswered task after ``after`` (wrapping); stay there if none."""
        done = self.store.load(annotator)
        tasks = self.tasks(annotator)
        for step in range(1, len(tasks) + 1):
            i = (after + step) % len(tasks)
            if tasks[i].folder not in done:
                return i
        return max(after, 0) if after >= 0 else len(tasks) - 1


def build_app(
    package: Package, store: AnswerStore, login: bool = False, warnings: tuple[str, ...] = ()
) -> Any:
    """The Gradio Blocks of the page. With ``login`` the annotator is the logged-in user;
    ``warnings`` are shown above everything (what the organiser must fix)."""
    gr = _gradio()
    session = Session(package, store)
    n_max = package.max_parts
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        if warnings:
            gr.Markdown("\n".join(f"**Warning:** {w}" for w in warnings), elem_id="warnings")
        gr.Markdown(f"## {TITLE}\n{HELP}")
        with gr.Row(visible=not login):
            who = gr.Dropdown(
                sorted(package.tasks), label="Your name", value=None, elem_id="annotator"
            )
            start = gr.Button("Start or resume", elem_id="start")
        state = gr.State(View(None, 0, ""))
        # The folder on screen, held by the page (see Session.resume).
        shown = gr.Number(visible=False, precision=0, elem_id="folder")
        progress = gr.Markdown(elem_id="progress")
        heading = gr.Markdown(elem_id="heading")
        clips, positions = _parts_row(gr, n_max)
        unknown = gr.Checkbox(label="unknown (the order cannot be told)", elem_id="unknown")
        with gr.Row():
            back = gr.Button("Previous", elem_id="previous")
            submit = gr.Button("Submit and go on", variant="primary", elem_id="submit")
            ahead = gr.Button("Next", elem_id="next")
        message = gr.Markdown(elem_id="message")
        outputs = [state, shown, progress, heading, message, unknown, *clips, *positions]

        def render(view: View) -> list:
            return _render(session, view, n_max, gr)

        def on_start(name: str | None, request: gr.Request) -> list:
            return render(session.start(request.username if login else name))

        def own(view: View, name: str | None, folder: float | None, request: gr.Request) -> View:
            """The page state (resumed from what the page shows if the server lost it), if
            it is the logged-in user's; else nothing is done or shown (the error goes to the
            session named, never that session's page to the user)."""
            user = request.username if login else None
            view = session.resume(view, user if login else name, folder)
            if not session.belongs(view, user):
                raise gr.Error("Not saved: this page is not the logged-in annotator's.")
            return view

        def on_submit(
            request: gr.Request, view: View, name: str | None, folder: float | None, unk: bool,
            *values: float | None,
        ) -> list:  # fmt: skip
            view = own(view, name, folder, request)
            return render(session.submit(view, list(values), bool(unk)))

        def on_back(request: gr.Request, view: View, name: str | None, folder: float | None):
            return render(session.move(own(view, name, folder, request), -1))

        def on_ahead(request: gr.Request, view: View, name: str | None, folder: float | None):
            return render(session.move(own(view, name, folder, request), 1))

        hidden = {"api_visibility": "private", "queue": True}
        page = [state, who, shown]
        start.click(on_start, [who], outputs, **hidden)
        submit.click(
            on_submit, [*page, unknown, *positions], outputs,
            concurrency_limit=1, concurrency_id=SAVE_QUEUE, **hidden,
        )  # fmt: skip
        back.click(on_back, page, outputs, **hidden)
        ahead.click(on_ahead, page, outputs, **hidden)
        if login:
            demo.load(on_start, [who], outputs, **hidden)
    return demo


@functools.cache
def exported_clip(gr: Any) -> type:
    """``gr.Video`` for the export's own clips, handing each file to the page as it is.

    ``gr.Video`` runs ffprobe on every file of every event to decide whether to convert it
    (0.3 to 0.6 s a clip on a loaded machine, five clips an event); the export writes H.264
    in MP4 only (copied from the build, or encoded with libx264 by ``burn``), which every
    browser plays, so the probe decides nothing here. The file still goes through Gradio's
    cache and its allowed-paths check. A class, since Gradio rebuilds a component from its
    class at every update; made with ``ABCMeta.__new__`` rather than through Gradio's
    ``ComponentMeta.__new__``, which writes a ``.pyi`` stub beside the module defining a
    component (here, into the installed package) and adds nothing a subclass without
    events of its own needs. ``is_template``: the page shows it as the ``gr.Video`` it is."""
    from gradio.data_classes import FileData

    def postprocess(self: Any, value: str | None) -> FileData | None:
        return None if value is None else FileData(path=str(value))

    namespace = {"__module__": __name__, "is_template": True, "postprocess": postprocess}
    return ABCMeta.__new__(type(gr.Video), "ExportedClip", (gr.Video,), namespace)


def _parts_row(gr: Any, n_max: int) -> tuple[list, list]:
    """A row of ``n_max`` (clip, position field) columns, hidden until a folder fills them."""
    clips, positions = [], []
    with gr.Row():
        for k in range(1, n_max + 1):
            with gr.Column(min_width=160):
                clip = exported_clip(gr)(label=f"part {k}", elem_id=f"clip-{k}", visible=False)
                clips.append(clip)
                positions.append(
                    gr.Number(
                        label=f"position of part {k}",
                        precision=0,
                        elem_id=f"position-{k}",
                        visible=False,
                    )
                )
    return clips, positions


def _render(session: Session, view: View, n_max: int, gr: Any) -> list:
    if view.annotator is None:
        hide = [gr.update(visible=False, value=None)] * (2 * n_max)
        return [view, None, "", "", view.message, gr.update(value=False), *hide]
    task = session.tasks(view.annotator)[view.index]
    done, total = session.progress(view.annotator)
    saved = session.store.load(view.annotator).get(task.folder)
    values, unk = form_from_cell(saved, len(task.clips))
    status = f"saved answer: `{saved}`" if saved else "not answered yet"
    clips = [
        gr.update(value=str(task.clips[k]), visible=True) if k < len(task.clips) else
        gr.update(value=None, visible=False)
        for k in range(n_max)
    ]  # fmt: skip
    # No minimum/maximum on the fields: Gradio would refuse out-of-range values in a toast
    # before the handler; the form's own check says what is wrong, where the page says it.
    numbers = [
        gr.update(value=values[k], visible=True) if k < len(task.clips) else
        gr.update(value=None, visible=False)
        for k in range(n_max)
    ]  # fmt: skip
    return [
        view,
        task.folder,
        f"**{view.annotator}**: {done} of {total} answered",
        f"### Folder {task.folder} ({view.index + 1} of {total}): "
        f"{MODALITY_WORDS[task.config]}\n{status}",
        view.message,
        gr.update(value=unk),
        *clips,
        *numbers,
    ]


def launch(
    package: Package,
    store: AnswerStore,
    host: str = "127.0.0.1",
    port: int | None = None,
    passwords: dict[str, str] | None = None,
    block: bool = True,
    warnings: tuple[str, ...] = (),
) -> Any:
    """Serve the page; files only from the clip folders, never the key or anything else;
    with ``passwords``, each session, event and file only to the annotator it is bound to,
    and the logins kept beside the answers (``logins``) for a restart."""
    gr = _gradio()
    demo = build_app(package, store, login=bool(passwords), warnings=warnings)
    from starlette.middleware import Middleware

    auth: Callable[[str, str], bool] | None = None
    folders = {name: package.folder_of(name) for name in package.tasks} if passwords else None
    app_kwargs: dict[str, Any] = {"middleware": [Middleware(OwnSessionsOnly, folders=folders)]}
    if passwords:
        app_kwargs["lifespan"] = Logins(store.folder, set(passwords)).lifespan()

        def auth(user: str, password: str) -> bool:
            return user in passwords and hmac.compare_digest(
                passwords[user].encode(), password.encode()
            )

    demo.queue(default_concurrency_limit=8)
    demo.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        auth_message="Log in with your annotator name and the password you were given.",
        allowed_paths=[str(p) for p in package.clip_dirs],
        blocked_paths=[str(package.root / KEY_NAME), str(package.root.parent / KEY_NAME)],
        prevent_thread_lock=not block,
        share=False,
        ssr_mode=False,
        quiet=True,
        footer_links=[],
        theme=_theme(gr),
        app_kwargs=app_kwargs,
    )
    return demo


def _theme(gr: Any) -> Any:
    """The default look with local fonts: the page fetches nothing from the internet."""
    system = ["ui-sans-serif", "system-ui", "sans-serif"]
    return gr.themes.Default(font=system, font_mono=["ui-monospace", "monospace"])


def _gradio() -> Any:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    from splice_build.errors import require

    return require("gradio", "annotate", "splice annotate serve")
