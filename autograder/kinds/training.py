"""Ordinary Python errors that an autograd or training mistake causes (an ``AttributeError`` on a tuple's
``backward``, a ``KeyError`` on a hook's dict, a ``TypeError`` from the optimizer given a module, ...): Python's
message names a type, not the mistake, so most of these kinds have no pattern (``""``) and
:mod:`autograder.explain.training` picks them from what the failing frame holds (its objects) or, for a pasted
traceback, from what its lines show. ``{seen}`` is what was looked at (or could not be), ``{name}`` the learner's
name for the object."""

from __future__ import annotations

from .kind import Kind, taught

_N1 = taught(1, "training step")
_N2 = taught(2, "Optimizers take leaves only")
_N6 = taught(6, "record nothing")
_N10 = taught(10, "Module hooks")
_N13 = taught(13, "Pitfalls")
_N14 = taught(14, "Pitfalls")
_N3 = taught(3, "Pitfalls")

KINDS: dict[str, Kind] = {
    "backward_on_container": Kind(
        "usage",
        "",
        _N1,
        "backward() was called on {name}, which is {seen}: backward() is a method of one tensor, the loss. "
        "A model or a loss function that returns several values (loss and logits, a list of per-task losses) "
        "gives a tuple or a list. {story}",
        "Take the loss out first: loss, aux = {name}; loss.backward(); for several losses, "
        "torch.stack(list(losses)).sum().backward() (or sum(losses).backward()), one backward for all.",
        types=("AttributeError",),
    ),
    "backward_on_number": Kind(
        "not built",
        "",
        _N1,
        "backward() was called on {name}, which is {seen}: the loss was turned into a Python number (.item(), "
        "float(), a sum of .item()s, NumPy), and a number remembers no graph. {story}",
        "Keep the loss a tensor until backward(): loss = criterion(out, y); loss.backward(); call .item() only "
        "for logging (running += loss.item()).",
        types=("AttributeError",),
    ),
    "loss_module_given_data": Kind(
        "usage",
        "",
        _N1,
        "A loss class was given the data: {call} builds the module, and its arguments are options (weight, "
        "reduction, ...), not the prediction and the target. {seen}",
        "Build the loss once, then call it: criterion = nn.{loss}(); loss = criterion(output, target); "
        "or use the function: torch.nn.functional's {function}(output, target).",
        types=("AttributeError", "RuntimeError", "TypeError"),
    ),
    "context_manager_not_called": Kind(
        "usage",
        "",
        _N6,
        "`with {name}:` uses the class {name} itself, not one of its objects: a grad mode (or autocast) is "
        "entered by an instance, so Python finds no context manager. {seen}",
        "Call it: `with {name}():` (torch.no_grad(), torch.enable_grad(), torch.inference_mode(), "
        "torch.autocast('cpu'), ...).",
        types=("TypeError", "AttributeError"),
    ),
    "optimizer_given_module": Kind(
        "usage",
        "",
        _N2,
        "The optimizer was given {name} itself {seen}: an optimizer takes an iterable of the tensors it "
        "updates (or of param-group dicts), not a module.",
        "Pass its parameters: torch.optim.SGD({name}.parameters(), lr=...).",
        types=("TypeError",),
    ),
    "optimizer_given_tensor": Kind(
        "usage",
        r"params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
        r"(?P<type>\S+)",
        _N2,
        "The optimizer was given one tensor ({type}) where it takes an iterable of tensors: it would iterate "
        "over the tensor's rows. {seen}",
        "Put it in a list: torch.optim.SGD([w], lr=...) (and [w, b] for several).",
        types=("TypeError",),
    ),
    "optimizer_overlapping_groups": Kind(
        "usage",
        r"some parameters appear in more than one parameter group",
        _N2,
        "A tensor is in two param groups of one optimizer: it would be stepped twice per step(), with two "
        "learning rates. Usually one group takes model.parameters() (all of them) and another a layer's. "
        "{seen}",
        "Give each parameter one group: split them, e.g. head = set(model.fc.parameters()); "
        "[{{'params': [p for p in model.parameters() if p not in head]}}, {{'params': list(head), 'lr': ...}}].",
        types=("ValueError",),
    ),
    "module_init_not_called": Kind(
        "usage",
        r"cannot assign (?P<what>module|parameters|buffer)s? before Module\.__init__\(\) call",
        _N10,
        "An nn.Module subclass's __init__ did not call super().__init__() before setting attributes: "
        "nn.Module.__init__ makes the dicts that hold parameters, submodules, buffers and hooks, so assigning "
        "a layer or using the module fails. {seen}",
        "Call super().__init__() first in __init__: def __init__(self): super().__init__(); self.fc = ...",
        types=("AttributeError",),
    ),
    "hook_never_ran": Kind(
        "usage",
        "",
        _N10,
        "{name} has no key {key}: the forward hook that fills it has not stored that key. {seen}",
        "{fix}",
        types=("KeyError",),
    ),
    "pickle_module_hook": Kind(
        "usage",
        "",
        _N10,
        "The module was pickled (torch.save(model), copy by pickle, a DataLoader worker) holding a function "
        "defined inside another function ({hook}), usually a hook registered on it (or a lambda attribute); "
        "pickle stores functions by name and cannot find a local one. {seen}",
        "Save the weights, not the object: torch.save(model.state_dict(), path); or remove the hook first "
        "(handle = m.register_forward_hook(...); handle.remove()), or define the hook at module level.",
        types=("AttributeError", "TypeError"),
    ),
    "wrapper_attribute": Kind(
        "usage",
        r"'(?P<wrapper>DistributedDataParallel|DataParallel)' object has no attribute '(?P<attr>\w+)'",
        _N14,
        "{wrapper} wraps your model and forwards only calls (forward), not attributes: {attr} is an "
        "attribute of the wrapped model, which is the wrapper's .module. {seen}",
        "Read it through the wrapper's .module: ddp_model.module.{attr} (keep a name for the unwrapped model: "
        "model = Net(); ddp_model = DDP(model)).",
        types=("AttributeError",),
    ),
    "compiled_state_dict_prefix": Kind(
        "usage",
        r"(?P<side>Unexpected|Missing) key\(s\) in state_dict: \"_orig_mod\.",
        _N13,
        "The state dict and the model disagree by a prefix: the keys of one start with '_orig_mod.', which "
        "torch.compile's wrapper (OptimizedModule) adds to the names of the model it compiled: saved from the "
        "compiled model, loaded into the plain one (or the other way).",
        "Save the plain model's state dict: torch.save(model.state_dict(), path) with model the module you "
        "compiled (or compiled._orig_mod.state_dict()); to load a file saved with the prefix: "
        "model.load_state_dict({{k.removeprefix('_orig_mod.'): v for k, v in sd.items()}}).",
        types=("RuntimeError",),
    ),
    "wrapper_state_dict_prefix": Kind(
        "usage",
        r"(?P<side>Unexpected|Missing) key\(s\) in state_dict: \"module\.",
        _N14,
        "The state dict and the model disagree by a prefix: the keys of one start with 'module.', which "
        "DistributedDataParallel and DataParallel add to the names of the model they wrap: saved from the "
        "wrapper, loaded into the plain model (or the other way).",
        "Save the wrapped model's own state dict: torch.save(ddp_model.module.state_dict(), path); to load a "
        "file saved with the prefix: model.load_state_dict({{k.removeprefix('module.'): v for k, v in sd.items()}}).",
        types=("RuntimeError",),
    ),
    # the two causes of "backward through the graph a second time", picked from the failing frame
    "consumed_same_loss": Kind(
        "consumed",
        "",
        _N3,
        "{name} was backwarded before, and that backward freed the tensors its graph had saved; this backward "
        "walks the same graph again. {seen}",
        "Run the forward again before each backward (compute {name} inside the loop), or add the losses and "
        "call backward() once; pass retain_graph=True to the first backward only when two backward passes "
        "really need the same graph.",
    ),
    "consumed_carried_state": Kind(
        "consumed",
        "",
        _N3,
        "A tensor kept across iterations (carried from the previous one, or made once before the loop) ties "
        "this loss to a graph that an earlier backward already freed. {seen}",
        "{fix} For a running total kept for logging, add numbers: total += loss.item().",
    ),
    "consumed_shared_graph": Kind(
        "consumed",
        "",
        _N3,
        "{name} and {other} share part of one graph, and {other}'s backward ran through that part first and freed "
        "the tensors it had saved there. {seen}",
        "Add the losses and call backward() once: ({other} + {name}).backward(), which gives every parameter the sum "
        "of both gradients; only when you need the two gradients apart, pass retain_graph=True to the first "
        "backward ({other}.backward(retain_graph=True)).",
    ),
    "dataset_requires_grad": Kind(
        "usage",
        "",
        _N6,
        "A DataLoader worker could not stack the batch: the Dataset's __getitem__ returns tensors that require "
        "grad (made from a parameter or a tensor with requires_grad=True), and the workers stack samples into "
        "shared memory with out=, which autograd refuses. The out= call is the DataLoader's, not yours. {seen}",
        "Return data without a graph from __getitem__: (...).detach(), or build the data under torch.no_grad(); "
        "a dataset holds data, and the graph starts in the training step (with num_workers=0 the batch would "
        "silently carry the graph instead).",
        types=("RuntimeError",),
    ),
}
