"""Outputs: the run folder and its document, figures, the HTML report and the posteriordb export."""
