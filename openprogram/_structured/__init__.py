"""Private helpers of structured output and decisions (see ``openprogram.structured``)."""
