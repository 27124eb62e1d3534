/** The window's pages, as the rail and the switcher offer them. */
import { Bot, Landmark, MessagesSquare, Plug, Settings } from 'lucide-react';

export type Page = 'chats' | 'agents' | 'connections' | 'settings' | 'policy';
export const PAGES: readonly { id: Page; label: string; icon: typeof Bot }[] = [
  { id: 'chats', label: 'Chats', icon: MessagesSquare },
  { id: 'agents', label: 'Agents', icon: Bot },
  { id: 'connections', label: 'Connections', icon: Plug },
  { id: 'settings', label: 'Settings', icon: Settings },
  { id: 'policy', label: 'Policy', icon: Landmark },
];
