"""The kinds of autograd mistakes ``explain`` knows: one pattern on PyTorch's message each, the
lesson that teaches it, and the cause and fix it explains (data only; the matching is in ``explain``).

Each kind is keyed to a pattern on PyTorch's own message (``KINDS``); kinds by family:

=============  ====================================================================================
not built      ``not_built``: there is no graph to walk
consumed       ``consumed``: backward already freed what the graph saved
changed        ``modified_inplace``, ``view_inplace``, ``leaf_inplace``, ``inference_tensor``,
               ``inference_version``, ``custom_function_view_inplace``: a tensor the graph
               depends on was modified in place
               (inference tensors are here: they carry no version counter, so autograd cannot
               watch them; ``inference_tensor`` also covers a ``.grad`` that a backward() run
               inside inference_mode() made an inference tensor, then changed in place)
kept alive     ``create_graph_cycle`` (a warning): the graph cannot be freed
usage          ``nonleaf_grad``, ``checkpoint_use_reentrant``, ``checkpoint_no_grad_input`` (all
               warnings), ``checkpoint_reentrant_grad``, ``non_scalar_output``,
               ``custom_function_gradients``, ``custom_function_non_tensor_grad``,
               ``custom_function_grad_shape``, ``once_differentiable``, ``function_transform``,
               ``grad_outputs_missing`` (autograd.grad of a non-scalar), ``numpy_requires_grad``:
               the graph is fine, an autograd call (or a custom Function) is used the wrong
               way (a reentrant checkpoint whose inputs do not require grad records no graph
               for the block, but the fix is in the call)
custom (ch 9)  ``custom_function_*`` (the gradients backward returns, save_for_backward, the legacy
               style, a missing backward or jvp, setup_context's signature), ``once_differentiable``,
               ``function_transform``, ``gradcheck_mismatch``/``gradcheck_float32``/``gradcheck_not_double``,
               ``function_backward_no_grad`` (not built: autograd.grad inside a backward)
hooks (ch 10)  ``backward_hook_inplace``, ``grad_overlap_inplace``, ``pack_hook_inplace`` (changed);
               ``hook_no_grad_tensor`` (not built); ``hook_changed_grad``,
               ``post_accumulate_nonleaf``, ``post_accumulate_returned``, ``forward_hook_returned_value``,
               ``hook_signature``, ``backward_hook_count``, ``unpack_hook_not_tensor``,
               ``unpack_hook_backward`` (any error in backward under saved-tensor hooks),
               ``full_backward_hook_no_input`` and ``nonfull_backward_hook`` (both warnings) (usage)
amp (ch 11)    ``autocast_dtype_mismatch`` and its other causes ``custom_function_autocast``,
               ``dtype_mismatch``; ``custom_fwd_setup_context``; GradScaler: ``scaler_call_order``
               (naming the order the code uses), ``scaler_not_scaled``, ``scaler_no_inf_checks``,
               ``scaler_update_before_step``, ``scaler_fp16_grads``; ``half_overflow``;
               warnings ``amp_device_unavailable``, ``amp_deprecated_api``, ``cpu_autocast_dtype``,
               ``lr_scheduler_order``/``scaler_skipped_step`` (usage)
func (ch 12)   ``vmap_item``, ``vmap_control_flow``, ``vmap_inplace``, ``vmap_randomness``,
               ``vmap_batch_norm``, ``vmap_mapped_sizes``, ``vmap_in_dims``, ``backward_in_transform``,
               ``func_grad_not_scalar``, ``func_output_type``, ``func_saved_tensor_hooks``,
               ``func_captured_mutation``/``func_buffer_mutation``, ``func_numpy``,
               ``grad_unused_input``, ``anomaly_nan`` (usage); ``second_derivative_no_create_graph``,
               ``second_derivative_cut``, ``second_derivative_constant`` (not built)
compile (13)   ``compile_builtin``, ``compile_item``, ``compile_data_dependent``,
               ``compile_retain_grad``, ``compile_hook_side_effect``, ``compile_checkpoint_side_effect``,
               ``compile_autograd_call``, ``compile_no_cxx`` (usage): Dynamo's graph breaks, errors
               under fullgraph=True, Inductor without a compiler
DDP (ch 14)    ``ddp_ready_twice``, ``ddp_unused_parameters``, ``ddp_no_process_group``,
               ``ddp_static_graph_changed``, ``ddp_model_mismatch``, ``ddp_no_trainable_parameters``,
               ``dist_address_in_use`` (usage)
catalogued     kinds named from PyTorch's own messages (``autograder/kinds/catalogue.tsv``, read from torch
               2.13; :mod:`autograder.kinds.catalogued`), chapters 1-14: leaves and requires_grad, detach and
               inference mode, gradcheck, autograd.functional and forward AD, compile, DDP; ``grad_is_none``
               (an error on None on a line that reads ``.grad``; ``grad_none_nonleaf`` and ``grad_reset`` (usage)
               where that tensor is a non-leaf or was reset by zero_grad); a catalogued message with no kind is
               unknown
training       ordinary Python errors an autograd or training mistake causes (:mod:`autograder.kinds.training`),
               picked from the failing frame's objects: ``backward_on_container``, ``backward_on_number``,
               ``loss_module_given_data``, ``context_manager_not_called``, ``optimizer_given_module``,
               ``optimizer_given_tensor``, ``optimizer_overlapping_groups``, ``module_init_not_called``,
               ``hook_never_ran``, ``pickle_module_hook``, ``wrapper_attribute``, ``compiled_state_dict_prefix``,
               ``wrapper_state_dict_prefix``, ``consumed_same_loss``, ``consumed_carried_state``,
               ``consumed_shared_graph``
returned       what torch returns and accepts, and where the graph was cut (:mod:`autograder.kinds.returned`),
               picked from the failing frame's objects: ``grad_returns_tuple``, ``hook_args_tuple``,
               ``tuple_as_tensor``, ``backward_on_none``, ``tensor_hook_returned_type``,
               ``parameter_assigned_tensor``, ``optimizer_empty_params``, ``scheduler_initial_lr``,
               ``optimizer_nonleaf_seen``, ``graph_cut`` (not built), ``nondifferentiable_requires_grad``
plain          plain Python errors an autograd mistake causes and messages that name their problem
               (:mod:`autograder.kinds.plain`), picked from the failing frames' objects:
               ``unused_input_none_grad``, ``unexpected_keyword``, ``optimizer_state_missing``,
               ``optimizer_step_closure``, ``optimizer_state_dict_groups``, ``vjp_cotangent_structure``,
               ``softmax_implicit_dim`` (a warning)
api return     what a training API returns, misused (:mod:`autograder.kinds.api_return`), read from the failing
               line and the statement that made its names: ``api_returned_none``, ``api_returned_value``,
               ``iterated_items_unpacked``, ``method_not_called``, ``attribute_called``, ``saved_tensors_called``,
               ``item_of_many``, ``backward_positional_flag``, ``closure_returns_none``
python layer   messages of torch's Python modules and warnings of the same chapters
               (:mod:`autograder.kinds.python_layer`, whose catalogue ``python_layer.tsv`` lists every raise and
               warn of those modules with its kind or the reason for none): ``clip_grad_nonfinite``,
               ``loss_broadcast``, ``checkpoint_unexpected_kwargs``, ``checkpoint_unpacked_twice``,
               ``gradcheck_nondeterministic``, ``vmap_output_not_tensor``, ``functional_call_not_dict``,
               ``process_group_env``, ``volatile_removed``, ``typed_storage_deprecated``,
               ``saved_variables_deprecated``, ``scalar_of_requires_grad``, ``allreduce_no_autograd``,
               ``ddp_grad_strides``, ``optimizer_duplicate_params`` (a warning)
notebook       ``name_not_defined``: not autograd's, a cell ran before the cell that defines a name;
               ``setup_not_run``: a name the set-up cell defines (torch, nn, ...)
               ``check_helpers_not_run``: a name an exercise's folded check helpers define
unknown        ``unknown``: anything else
=============  ====================================================================================

NOTE [stable parts]: PyTorch rewords its messages (``SigmoidBackward0`` became ``Sigmoid``, the
"Hint:" changed, the checkpoint warning was reworded), so each pattern matches only words
that have stayed the same, and the details (shape, op, versions) are optional groups.

The kinds live in :mod:`autograder.kinds`, one module per chapter (``graph`` for chapters 1-8,
``functions``, ``hooks``, ``precision``, ``higher_order``, ``compiled``, ``distributed``), each with
the kinds it was written with (``KINDS``) and those collected later (``MORE``); then ``told_apart``
(causes of one message that the traceback tells apart) and ``notebook`` (cells run out of order).
"""

from __future__ import annotations

import re

from . import (
    api_return,
    catalogued,
    compiled,
    distributed,
    functions,
    graph,
    higher_order,
    hooks,
    notebook,
    plain,
    precision,
    python_layer,
    returned,
    told_apart,
    training,
)
from .kind import MODIFIED_INPLACE, Kind, modified_inplace_message, taught

__all__ = [
    "Kind",
    "KINDS",
    "UNKNOWN",
    "MODIFIED_INPLACE",
    "EXCEPTION_TYPES",
    "kinds_by_chapter",
    "modified_inplace_message",
]

# In this order: where two patterns match at the same place in a message, explain takes the kind listed first
# (and kinds_by_chapter lists each chapter's kinds in it).
KINDS: dict[str, Kind] = {
    **graph.KINDS,
    **functions.KINDS,
    **hooks.KINDS,
    **precision.KINDS,
    **higher_order.KINDS,
    **compiled.KINDS,
    **distributed.KINDS,
    **functions.MORE,
    **hooks.MORE,
    **precision.MORE,
    **higher_order.MORE,
    **compiled.MORE,
    **distributed.MORE,
    **training.KINDS,
    **returned.KINDS,
    **plain.KINDS,
    **api_return.KINDS,
    **python_layer.KINDS,
    **catalogued.KINDS,
    **told_apart.KINDS,
    **notebook.KINDS,
}
UNKNOWN = Kind(
    "unknown",
    "",
    taught(0, "Contents"),
    "This message is not one of the autograd errors and warnings this explainer knows.",
    "Read PyTorch's message above; the course's lessons are listed on the start page.",
)
# Every exception type (builtin name) a known kind comes as: what the notebook extension explains.
EXCEPTION_TYPES = tuple(sorted({t for k in KINDS.values() for t in k.types}))


def kinds_by_chapter() -> dict[int, list[str]]:
    """The kinds ``explain`` knows, by the chapter whose lesson teaches each (0: the start page, for a
    cell run before the cell it needs), chapters in order, kinds in the table's order."""
    chapters: dict[int, list[str]] = {}
    for name, kind in KINDS.items():
        where = kind.lesson if isinstance(kind.lesson, str) else kind.lesson[0]
        found = re.search(r"notebooks/(\d+)_", where)
        chapters.setdefault(int(found.group(1)) if found else 0, []).append(name)
    return dict(sorted(chapters.items()))
