"""ipywidgets explorers of the lessons, one module per chapter.

Each explorer is a thin widget over a plain function that returns records or text, so what a
widget shows is what the tests check (call the function to see the same thing as text):

============  ===========  ===================================================================
module        chapters     plain functions / explorers
============  ===========  ===================================================================
graph         1-2          run_steps / step_explorer; leaf_facts, leaf_table / leaf_explorer
backward      3-4          backward_facts, backward_table / backward_explorer;
                           accumulation_facts, accumulation_table / accumulation_explorer
inplace       5            inplace_facts, inplace_table / inplace_explorer
grad_modes    6            grad_mode_facts, grad_mode_table / grad_mode_explorer
memory        7-8          loop_memory, loop_table, leak_table / leak_explorer; stack,
                           checkpoint_peak, segment_rows, segment_table / segment_explorer
functions     9            relu_facts, relu_table / relu_explorer
hooks         10           hook_events, hook_table / hook_explorer
precision     11           precision_facts, precision_table / precision_explorer
higher_order  12           jacobian_cost, jacobian_table / jacobian_explorer; nan_facts, nan_table
compile       13           compile_facts, compile_table / compile_explorer
engine        14           all_nodes, engine_events, engine_table / engine_explorer
plot          all          line_plot: a line plot with alt text from its data and its numbers
============  ===========  ===================================================================

Two helpers build them: :func:`autograder.explore.shell.explorer` (the widget shell: controls,
an output area redrawn on every change, a "run this cell" text) and
:func:`autograder.explore.table.text_table` (fixed-width text tables). Importing this package
imports nothing; import the chapter modules themselves.
"""
