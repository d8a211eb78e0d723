"""Pairwise judging of two runs: for each shared prompt a judge says which response is better, in both orders.

    import evalkit
    p = evalkit.pairwise("results/baseline", "results/candidate")   # judge: evalkit's pairwise prompt
    p                                                                # renders in a notebook
    p.rows                                                           # per row: both verdicts, the outcome

- ``judge``: the pairwise judge (the built-in ``pairwise.prompty``, written for evalkit, or a custom ``.prompty``
  with inputs ``query``, ``response_a``, ``response_b``), its calls through a ``JudgePool`` (cache, retries,
  metering) and the strict reading of its answer (``{"winner": "A" | "B" | "tie", "reason"}``);
- ``result``: ``pairwise()`` and the ``Pairwise`` model: rows paired as ``evalkit.compare`` pairs them, both
  orders combined (position bias cancelled, disagreeing orders are ties), win / tie / loss with an exact
  interval and the sign test;
- ``views``: the text table, the template context and the notebook HTML (``templates/pairwise.html.j2``).

May import: ``evalkit.analysis`` (pairing, statistics, templating), ``evalkit.judges``, ``evalkit.documents``,
``evalkit.errors``.
"""
