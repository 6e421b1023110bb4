"""The simulated OpenAI-compatible engine (`capplan sim-server`): calibrated profiles, a
continuous-batching scheduler, the replies it streams and the Starlette server around them."""
