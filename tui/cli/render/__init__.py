"""What the commands print: the rich console, the status report, advice / budget / watch
reports and the gate prompts (questionary). Every text from input files passes through
``scars.core.sanitize`` first."""
