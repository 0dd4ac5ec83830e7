"""Typical mistakes in ex10_hooks: see the package docstring for the format."""

MISTAKES = {
    # Q1: the loop variable read when the hook runs (a closure), not when it is made: every entry
    # carries the last module's name (the code of a popular article).
    "ex10-q1-late-binding": {
        "answers": {
            "q1_answer": """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, module in model.named_modules():
        if list(module.children()):
            continue

        def forward_hook(module, args, out):
            out.register_hook(lambda g: log.append((name, g.norm().item())))

        handles.append(module.register_forward_hook(forward_hook))
    return handles
"""
        },
        "fails": {"q1_check": "a closure in a loop reads the loop variable when it runs"},
    },
    # Q1: full backward hooks: right on the visible model, but the forward of a model with
    # nn.ReLU(inplace=True) raises "BackwardHookFunction is a view and is being modified inplace".
    "ex10-q1-full-backward-inplace": {
        "answers": {
            "q1_answer": """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, module in model.named_modules():
        if not list(module.children()):
            handles.append(module.register_full_backward_hook(
                lambda m, grad_input, grad_output, name=name: log.append((name, grad_output[0].norm().item()))))
    return handles
"""
        },
        "fails": {"q1_check": "BackwardHookFunction is a view and is being modified inplace"},
    },
    # Q1: the norms recorded in the forward (of the output, not of its gradient), in forward order.
    "ex10-q1-forward-order": {
        "answers": {
            "q1_answer": """def attach_grad_norm_hooks(model, log):
    handles = []
    for name, module in model.named_modules():
        if not list(module.children()):
            handles.append(module.register_forward_hook(
                lambda m, args, out, name=name: log.append((name, out.norm().item()))))
    return handles
"""
        },
        "fails": {"q1_check": "the list must follow backward: the last module first"},
    },
    # Q1: the handles not returned: the hooks keep recording after "removal".
    "ex10-q1-no-handles": {
        "answers": {
            "q1_answer": """def attach_grad_norm_hooks(model, log):
    for name, module in model.named_modules():
        if list(module.children()):
            continue

        def forward_hook(module, args, out, name=name):
            out.register_hook(lambda g: log.append((name, g.norm().item())))

        module.register_forward_hook(forward_hook)
    return []
"""
        },
        "fails": {"q1_check": "Return the handles of every hook you registered"},
    },
    # Q2: a tensor hook on each parameter: right for one backward, but it clips each backward's
    # contribution before accumulation, not the accumulated .grad.
    "ex10-q2-before-accumulation": {
        "answers": {
            "q2_answer": """def attach_clip_hooks(model, clip):
    return [p.register_hook(lambda g: g.clamp(-clip, clip)) for p in model.parameters()]
"""
        },
        "fails": {"q2_check": "sees only the new contribution, before it is added to .grad"},
    },
    # Q2: the clipped tensor computed out of place and dropped: the hook returns None.
    "ex10-q2-result-dropped": {
        "answers": {
            "q2_answer": """def attach_clip_hooks(model, clip):
    def clip_grad(g):
        g = g.clamp(-clip, clip)

    return [p.register_hook(clip_grad) for p in model.parameters()]
"""
        },
        "fails": {"q2_check": "A hook's result must reach .grad"},
    },
    # Q3: the step is right but the gradient is not freed: every .grad stays alive.
    "ex10-q3-grad-kept": {
        "answers": {
            "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)

    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters() if p.requires_grad]


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * p.element_size() for p in model.parameters() if p.requires_grad]
    return max(sizes) if fused else sum(sizes)
"""
        },
        "fails": {"q3_check": "Set p.grad = None in the hook"},
    },
    # Q3: the prediction counts frozen parameters and assumes 4 bytes per element.
    "ex10-q3-frozen-counted": {
        "answers": {
            "q3_answer": """def fuse_sgd_into_backward(model, lr):
    def step(p):
        with torch.no_grad():
            p.add_(p.grad, alpha=-lr)
        p.grad = None

    return [p.register_post_accumulate_grad_hook(step) for p in model.parameters() if p.requires_grad]


def peak_grad_bytes(model, fused):
    sizes = [p.numel() * 4 for p in model.parameters()]
    return max(sizes) if fused else sum(sizes)
"""
        },
        "fails": {"q3_check": "peak_grad_bytes counts the frozen parameters too"},
    },
    # Q4: every saved tensor converted, the weights too: a 16-bit copy of each saved weight is added.
    "ex10-q4-weights-copied": {
        "answers": {
            "q4_answer": """def half_precision_hooks(params):
    def pack(t):
        return (t.dtype, t.to(torch.float16))

    def unpack(packed):
        return packed[1].to(packed[0])

    return pack, unpack
"""
        },
        "fails": {"q4_check": "a 16-bit copy of a weight is extra memory"},
    },
    # Q4: rounded to 8 bits (float8): the bytes are fine, the gradients are not.
    "ex10-q4-too-coarse": {
        "answers": {
            "q4_answer": """def half_precision_hooks(params):
    kept = {p.untyped_storage().data_ptr() for p in params}

    def pack(t):
        if t.untyped_storage().data_ptr() in kept:
            return t
        return (t.dtype, t.to(torch.float8_e4m3fn))

    def unpack(packed):
        return packed if isinstance(packed, torch.Tensor) else packed[1].to(packed[0])

    return pack, unpack
"""
        },
        "fails": {"q4_check": "gradient of"},
    },
}
