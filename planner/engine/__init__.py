"""The serving model: a small model of one engine's continuous batching (decode and prefill step
times, KV-cache capacity, admission and queueing), its parameters started from physics and
calibrated on a deployment's measured levels of every load kind; it answers any workload and
any load (concurrency or request rate) with the basis and the band of each answer.

spec (the physical facts of a deployment) <- step (the step-time law and the steady states of
closed and open loops) <- calibrate (fitting the efficiencies to measurements) <- model (the one
typed entry point: EngineModel.predict) <- curves (a deployment's curve at an unmeasured
workload or from rate levels), transfer (a deployment nothing measured: physics-only), fill
(what `capplan predict` cannot read from a fit).
"""
