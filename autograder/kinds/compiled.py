"""Chapter 13's kinds: torch.compile: Dynamo's graph breaks under fullgraph=True, retain_grad in a compiled function,
Inductor without a compiler (lesson 13)."""

from __future__ import annotations

from .kind import Kind, taught

_COMPILE = taught(13, "Pitfalls")
KINDS: dict[str, Kind] = {
    "compile_builtin": Kind(
        "usage",
        r"Failed to trace builtin operator",
        _COMPILE,
        "torch.compile's Dynamo met a Python builtin it cannot put in a graph, typically print(...) "
        "inside the compiled function. Without fullgraph=True that is a graph break (two graphs, the "
        "print runs in Python between them); with fullgraph=True it is this error.",
        "Take the print (or logging) out of the compiled function, or return what you want to see "
        "and print it outside; torch._dynamo.explain(fn)(*args) lists every break and its reason.",
    ),
    "compile_item": Kind(
        "usage",
        r"Tensor\.item\(\) call with capture_scalar_outputs=False",
        _COMPILE,
        "A compiled function calls .item() (or float(t)): a Python number cannot stay inside the "
        "graph, so Dynamo breaks the graph there.",
        "Keep the value a tensor: compare and select with tensor ops (torch.where, clamp, masks) "
        "instead of Python numbers; call .item() outside the compiled function.",
    ),
    "compile_data_dependent": Kind(
        "usage",
        r"Data-dependent branching|Could not guard on data-dependent expression",
        _COMPILE,
        "A Python if (or while, and, or) in a compiled function depends on a tensor's values, "
        "such as if y.sum() > 0 or if y.sum().item() > 0. A graph records operations, not Python "
        "decisions, so Dynamo cannot put the choice in the graph (with fullgraph=True, .item() is "
        "captured as an unknown number and the if on it fails).",
        "Compute both branches and select with torch.where(cond, a, b) (gradients flow only "
        "through the selected elements, as with the if), or use torch.cond; keep Python ifs for "
        "shapes, flags and constants.",
    ),
    "compile_retain_grad": Kind(
        "usage",
        r"Tensor\.retain_grad\(\) with AOTDispatcher",
        _COMPILE,
        "retain_grad() was called inside a compiled function. AOTAutograd traces the backward "
        "ahead of time into one compiled Node, so an intermediate tensor of the block has no Node "
        "of its own whose gradient could be kept in .grad.",
        "Make the tensor a boundary: compile the code before it and the code after it as two "
        "functions (or run one part eagerly) and call retain_grad() on it between them (returned "
        "from one compiled block it gets no gradient from inside that block). A register_hook "
        "inside the compiled function is traced only if the hook just transforms the gradient "
        "(return g * 2); a hook with a side effect (appending g to a list, logging) breaks the "
        "graph (HOP: Unsafe side effect), an error under fullgraph=True.",
    ),
}
# Collected later, from the lessons' pitfalls, the exercises' typical mistakes and the messages most
# reported on PyTorch's issue tracker and forums (kinds.table lists them after every chapter's KINDS).
# A kind whose pattern is "" is a cause that explain_refine tells apart from another kind's message.
MORE: dict[str, Kind] = {
    "compile_hook_side_effect": Kind(
        "usage",
        r"HOP: Unsafe side effect",
        (_COMPILE[0], "Hooks and"),
        "A tensor hook registered inside the compiled function has a side effect (it appends to a "
        "list, logs, writes a global): Dynamo can trace a hook that only transforms the gradient, "
        "but not one that mutates something outside, so the graph breaks there (under "
        "fullgraph=True: this error).",
        "Keep hooks inside compiled code pure (return g * 2; no append or print); register the "
        "logging hook outside the compiled function (on its output, in eager code), or capture "
        "the backward with compiled autograd.",
    ),
    "compile_checkpoint_side_effect": Kind(
        "usage",
        "",
        (_COMPILE[0], "Hooks and"),
        "A function checkpointed (torch.utils.checkpoint) inside compiled code has a side effect "
        "(it appends to a list, counts calls, writes a global): the checkpoint replays its forward "
        "in backward, so Dynamo refuses to trace the side effect (under fullgraph=True: this "
        "error).",
        "Move the side effect out of the checkpointed function; or set "
        "torch._dynamo.config.skip_fwd_side_effects_in_bwd_under_checkpoint = True if it may run "
        "once only.",
    ),
    "compile_autograd_call": Kind(
        "usage",
        r"Unsupported Tensor\.backward\(\) call|using `torch\.autograd\.grad` with "
        r"`torch\._dynamo\.config\.trace_autograd_ops=False`",
        (_COMPILE[0], "AOTAutograd"),
        "backward() or torch.autograd.grad is called inside the compiled function. Dynamo captures "
        "the forward (AOTAutograd traces its backward ahead of time); a backward call inside is a "
        "graph break (under fullgraph=True: this error).",
        "For backward(): compile the forward and the loss only, and call loss.backward() outside the "
        "compiled function (the backward is compiled anyway). For torch.autograd.grad (a gradient penalty, "
        "a second derivative): run that function without torch.compile; compiling only its forward and "
        "calling torch.autograd.grad(..., create_graph=True) outside fails next (aot_autograd does not "
        "support double backward).",
    ),
    "compile_no_cxx": Kind(
        "usage",
        r"No working C\+\+ compiler found|InvalidCxxCompiler",
        (_COMPILE[0], "Inductor"),
        "torch.compile's default backend, Inductor, writes C++ for the CPU and found no C++ compiler to build it.",
        "Install one (Debian/Ubuntu: sudo apt-get install g++), or compile with "
        "backend='aot_eager' (the graphs without code generation, as the course's lessons do).",
    ),
    # chapter 14: DDP and its helpers
}
