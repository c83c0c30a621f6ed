import type { Command } from 'commander';

// Placeholder until the command lands (being written now).
export function registerGrade(program: Command): void {
  void program;
}
