r"""The round of a candidate-set rule, its pieces' protocols, the shared pieces, batch slots and pending plays."""
